/**
 * A new child's roots, in place before its first request. A server that asks its client for roots
 * once it is initialized (server-filesystem does) applies the answer in its own time and refuses
 * every path until then, so a request written right behind `notifications/initialized` met an empty
 * sandbox: each new session's first call on an `isolation: session` child was "Access denied".
 *
 *   handshake declared roots? ─no─► go
 *        │ yes
 *        ▼
 *   the child asks for roots within ROOTS_ASK_MS? ─no─► go; this upstream is learnt not to ask, so
 *        │ yes                                           its later children do not wait
 *        ▼
 *   the answer is written to the child (at most ROOTS_ANSWER_MS) ─► ROOTS_APPLY_MS ─► go
 *
 * Only a child's first requests wait, once: the pool's children live for many calls.
 */
import type { RequestId } from '../wire/jsonrpc.ts'

/** How long after `notifications/initialized` a child may take to ask for its roots. */
export const ROOTS_ASK_MS = 1000
/** How long the client may take to answer the child's roots/list before the requests go anyway. */
export const ROOTS_ANSWER_MS = 5000
/** The child's time to apply the roots it was told (a server checks each folder on the disk first). */
export const ROOTS_APPLY_MS = 100

/** Per upstream (its config object, one per generation): true once a child asked for roots, false once one did not. */
const learnt = new WeakMap<object, boolean>()

/** The wait of one child; `done` resolves when its first requests may go. */
export class RootsSettle {
  readonly done: Promise<void>
  readonly #upstream: object
  #go!: () => void
  #timer: NodeJS.Timeout | undefined
  /** The child's roots/list, while its answer has not been written. */
  #asked: RequestId | undefined
  #settled = false

  /**
   * A child of `upstream` asked for roots, whether or not one waits for it: a server learnt not to
   * ask (its first child was slower than ROOTS_ASK_MS) is waited for again from its next child on.
   */
  static askedBy(upstream: object): void {
    learnt.set(upstream, true)
  }

  /** Undefined when nothing needs waiting for: the handshake declared no roots, or this upstream is known not to ask. */
  static for(upstream: object, handshake: unknown): RootsSettle | undefined {
    const capabilities = (handshake as { capabilities?: { roots?: unknown } } | undefined)?.capabilities
    if (capabilities?.roots === undefined || learnt.get(upstream) === false) return undefined
    return new RootsSettle(upstream)
  }

  private constructor(upstream: object) {
    this.#upstream = upstream
    this.done = new Promise((resolve) => (this.#go = resolve))
  }

  /** The handshake is over: from now the child has ROOTS_ASK_MS to ask (unless it already has). */
  initialized(): void {
    if (this.#settled || this.#asked !== undefined) return
    this.#wait(ROOTS_ASK_MS, () => {
      if (!learnt.has(this.#upstream)) learnt.set(this.#upstream, false)
    })
  }

  /** The child sent roots/list with `id`. */
  asked(id: RequestId): void {
    if (this.#settled || this.#asked !== undefined) return
    learnt.set(this.#upstream, true)
    this.#asked = id
    this.#wait(ROOTS_ANSWER_MS, undefined)
  }

  /** A response with `id` was written to the child: when it answers the roots/list, the child gets its time to apply it. */
  written(id: RequestId): void {
    if (this.#settled || this.#asked !== id) return
    this.#asked = undefined
    this.#wait(ROOTS_APPLY_MS, undefined)
  }

  /** Stop waiting (the child is gone): whatever waits goes on, and meets the child's state. */
  end(): void {
    this.#finish()
  }

  #wait(ms: number, then: (() => void) | undefined): void {
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      then?.()
      this.#finish()
    }, ms)
  }

  #finish(): void {
    if (this.#settled) return
    this.#settled = true
    clearTimeout(this.#timer)
    this.#go()
  }

  get settled(): boolean {
    return this.#settled
  }
}
