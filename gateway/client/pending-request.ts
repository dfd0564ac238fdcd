/**
 * One client request awaiting its answer (protocol.ts keeps them by id): its deadline, which progress
 * may move (RequestOptions.resetTimeoutOnProgress), its cancellation, and its settling, once.
 */
import type { ClientRequestOptions } from '../registry/context.ts'
import type { AbortLike } from '../wire/abort-like.ts'
import type { RequestId } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { CancelledError, TimeoutError } from './errors.ts'

/**
 * Per-request options: `timeoutMs` (the client's default otherwise; 0: none), `onProgress` (called on each
 * progress notification; return `false` to cancel the request), `signal` (aborting cancels it).
 */
export type RequestOptions = ClientRequestOptions & {
  /** An AbortSignal, or the gateway's cheaper LightAbort (a downstream request's cancellation). */
  signal?: AbortLike
  /**
   * Opaque, handed back as `related` to the handlers of what the server sends on this request's own
   * stream (a request or notification on its SSE stream), so a proxy knows which request it belongs to.
   */
  context?: unknown
  /**
   * True: the result may come back as a VerbatimResult (wire/message-text.ts): its text checked as
   * one JSON object but not parsed (client/result-text.ts), with no members to read, so that an
   * answer made of it carries the server's bytes. Only for a caller that passes the result on unread;
   * a result whose `isError` is true, or any answer the check does not read, comes parsed as usual.
   */
  resultAsSent?: boolean
  /**
   * Each progress notification of this request restarts its timeout, up to `maxTotalTimeoutMs` from
   * when it was sent (Infinity when absent): a long call that says it is working is not cut at the
   * first timeout, and one that never ends still is (the spec's maximum).
   */
  resetTimeoutOnProgress?: boolean
  maxTotalTimeoutMs?: number
}

/** What a pending request needs of its protocol. */
export interface PendingHost {
  /** Forgets the request; false when it had already ended. */
  forget(id: RequestId): boolean
  /** Tells the server the request is cancelled. */
  sendCancelled(id: RequestId, reason: string): void
}

/**
 * One request awaiting its answer: settles its promise once (answer, error, timeout, cancellation),
 * then forgets its abort listener. One object with methods rather than a closure per
 * step, since every request made them all and most requests only ever use `finish`.
 */
export class Pending {
  readonly onProgress: ClientRequestOptions['onProgress']
  /** The caller's `context` (a proxy's: the downstream request's ctx), until the request ends. */
  context: unknown
  readonly #protocol: PendingHost
  readonly #id: RequestId
  readonly #method: string
  #signal: AbortLike | undefined
  readonly #resolve: (result: JsonObject) => void
  readonly #reject: (error: Error) => void
  /**
   * When the request times out (performance.now()); Infinity: never. The protocol's one timer watches
   * it: a deadline moved later (progress) is found when the timer fires at the old one, and set again.
   */
  deadline: number
  readonly #timeoutMs: number
  /** The latest the deadline may move to on progress; undefined: progress does not move it. */
  readonly #latest: number | undefined
  readonly #maxTotalMs: number
  #onAbort: (() => void) | undefined

  constructor(protocol: PendingHost, id: RequestId, method: string, timeoutMs: number, options: RequestOptions, resolve: (result: JsonObject) => void, reject: (error: Error) => void) {
    this.#protocol = protocol
    this.#id = id
    this.#method = method
    this.onProgress = options.onProgress
    this.context = options.context
    this.#resolve = resolve
    this.#reject = reject
    this.#signal = options.signal
    // 0 means no timeout, as in lua-resty-mcp.
    this.#timeoutMs = timeoutMs
    const now = performance.now()
    this.deadline = timeoutMs === 0 ? Infinity : now + timeoutMs
    this.#maxTotalMs = options.maxTotalTimeoutMs ?? Infinity
    this.#latest = options.resetTimeoutOnProgress === true && timeoutMs !== 0 ? now + this.#maxTotalMs : undefined
    const signal = options.signal
    if (signal !== undefined) {
      this.#onAbort = () => this.cancel(reasonOf(signal.reason))
      signal.addEventListener('abort', this.#onAbort, { once: true })
    }
  }

  finish(error: Error | undefined, result?: JsonObject): void {
    if (!this.#protocol.forget(this.#id)) return
    this.#letGo()
    if (error === undefined) this.#resolve(result!)
    else this.#reject(error)
  }

  /** Ends the request with CancelledError and tells the server, unless it already ended. */
  cancel(reason: string): void {
    if (!this.#protocol.forget(this.#id)) return
    this.#tellServer(reason)
    // Forgotten already: finish() would do nothing, so settle here.
    this.#letGo()
    this.#reject(new CancelledError(reason, { requestId: this.#id }))
  }

  /** The server reported progress: with resetTimeoutOnProgress, the timeout starts again (within the latest). */
  progressed(): void {
    if (this.#latest !== undefined) this.deadline = Math.min(performance.now() + this.#timeoutMs, this.#latest)
  }

  /** The request's deadline passed: ends it with TimeoutError and tells the server. */
  timedOut(): void {
    // Progress kept it going up to the most it may take: that is the time it had.
    const timeoutMs = this.#latest !== undefined && this.deadline >= this.#latest ? this.#maxTotalMs : this.#timeoutMs
    if (!this.#protocol.forget(this.#id)) return
    this.#tellServer(`timed out after ${timeoutMs} ms`)
    this.#letGo()
    this.#reject(new TimeoutError(`${this.#method} got no answer within ${timeoutMs} ms`, timeoutMs, { requestId: this.#id }))
  }

  /**
   * The request has ended: its abort listener goes, and so do its references to the caller's context
   * and signal. A proxied call's context is the downstream request (its ctx, response, socket state),
   * and an ended Pending that still held it kept that whole request alive through young-generation
   * collections: P promoted ~2.7 KB a call to the old generation (U, serving the call itself, none),
   * and its scavenges paused it ~6x as long (--trace-gc-nvp, bench/README.md "Where the p99 comes from").
   */
  #letGo(): void {
    if (this.#onAbort !== undefined) this.#signal!.removeEventListener('abort', this.#onAbort)
    this.#onAbort = undefined
    this.#signal = undefined
    this.context = undefined
  }

  // initialize must not be cancelled (MCP lifecycle); it just fails.
  #tellServer(reason: string): void {
    if (this.#method !== 'initialize') this.#protocol.sendCancelled(this.#id, reason)
  }
}

export function reasonOf(reason: unknown): string {
  if (reason instanceof Error) return reason.message
  return reason === undefined ? 'aborted' : String(reason)
}
