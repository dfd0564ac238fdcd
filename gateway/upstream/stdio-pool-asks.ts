/**
 * Whose is a shared child's request to a client (sampling, elicitation)? stdio carries no stream per
 * request, so the multiplexer keeps the question answerable instead of guessing:
 *
 *   a call that may ask    tools/call, prompts/get … of a session whose client can be asked, unless
 *                          its tool is known not to ask: one session at a time per child (the others'
 *                          wait here, queued, bounded by their own timeouts)
 *   a call known quiet     a tool that once ran alone and answered without asking: runs freely
 *   a call that asked      its tool may ask again: back under the rule
 *
 * So when the child asks, at most one session has a call in flight that may have caused it. Where it
 * still cannot be told (a tool that asked once and not before), the child's request waits until all
 * but one of the sessions it may belong to have finished their calls; it is refused only when none is
 * left. What is learnt is bounded (LEARNT_MAX keys, forgotten all at once past it).
 */

/** Keys learnt per child, each set; past it the set starts over (learning again costs only queueing). */
const LEARNT_MAX = 1024

/** Requests of the child waiting to be told whose they are; one more is refused at once. */
export const MAX_UNATTRIBUTED = 64

interface Held<Session> {
  session: Session
  /** The session's id of the call. */
  id: unknown
  go: () => void
  /** Settles the call's send without sending it (cancelled, the session left, the child gone). */
  drop: (error?: Error) => void
}

/** `Session` is the multiplexer's view of a session; only its identity matters here. */
export class AskGate<Session> {
  /** Keys (method and tool or prompt name) that answered without asking. */
  readonly #quiet = new Set<string>()
  /** Sessions with calls that may ask in flight, and how many each. */
  readonly #asking = new Map<Session, number>()
  readonly #held: Array<Held<Session>> = []

  /** True when a call under `key` may ask its client (so it goes under the one-session rule). */
  mayAsk(key: string): boolean {
    return !this.#quiet.has(key)
  }

  /** True when a call of `session` that may ask can go now: no other session has one in flight. */
  open(session: Session): boolean {
    return this.#asking.size === 0 || (this.#asking.size === 1 && this.#asking.has(session))
  }

  /** Sessions with calls that may ask in flight. */
  askingSessions(): IterableIterator<Session> {
    return this.#asking.keys()
  }

  /** Queues a call until `open(session)`. */
  hold(held: Held<Session>): void {
    this.#held.push(held)
  }

  /** Drops the queued call `id` of `session` (cancelled); true when one was queued. */
  cancel(session: Session, id: unknown): boolean {
    const index = this.#held.findIndex((held) => held.session === session && held.id === id)
    if (index === -1) return false
    this.#held.splice(index, 1)[0]!.drop()
    return true
  }

  /** Drops every queued call of `session` (it left). */
  leave(session: Session): void {
    for (let i = this.#held.length - 1; i >= 0; i--) if (this.#held[i]!.session === session) this.#held.splice(i, 1)[0]!.drop()
  }

  /** Drops every queued call with `error` (the child is gone). */
  drain(error: Error): void {
    for (const held of this.#held.splice(0)) held.drop(error)
    this.#asking.clear()
  }

  /** True when `session` has calls queued. */
  holds(session: Session): boolean {
    return this.#held.some((held) => held.session === session)
  }

  /** Queued calls. */
  get held(): number {
    return this.#held.length
  }

  started(session: Session): void {
    this.#asking.set(session, (this.#asking.get(session) ?? 0) + 1)
  }

  /** A call that may ask ended; `quietKey` when it was answered without asking (learnt quiet). */
  finished(session: Session, quietKey: string | undefined): void {
    const left = (this.#asking.get(session) ?? 1) - 1
    if (left > 0) this.#asking.set(session, left)
    else this.#asking.delete(session)
    if (quietKey !== undefined) {
      if (this.#quiet.size >= LEARNT_MAX) this.#quiet.clear()
      this.#quiet.add(quietKey)
    }
    if (this.#asking.size === 0) this.#release()
  }

  /** A key once thought quiet asked: it goes under the rule again. */
  asks(key: string): void {
    this.#quiet.delete(key)
  }

  /** The first queued session's calls go (all of them: one session's calls never wait on each other). */
  #release(): void {
    const first = this.#held[0]
    if (first === undefined) return
    const going: Array<() => void> = []
    for (let i = 0; i < this.#held.length; ) {
      if (this.#held[i]!.session === first.session) going.push(this.#held.splice(i, 1)[0]!.go)
      else i++
    }
    for (const go of going) go()
  }
}
