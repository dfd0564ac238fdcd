/**
 * The requests a shared stdio child sends its sessions' clients (sampling, elicitation, roots), as the
 * multiplexer tracks them: each gets an id of the multiplexer's own on the way down, so that the
 * session's answer, the child's cancellation and a later `notifications/elicitation/complete` find
 * their way back, and nothing of one session ever reaches another.
 *
 *   child id "a" ─► open(session) ─► inbound id 3 ─► session's client ─► answer 3 ─► answered() ─► child id "a"
 *   child cancels "a" ─► cancelledByChild("a") ─► the session is told to forget 3
 */
import type { RequestId } from '../wire/jsonrpc.ts'
import type { ClientCapabilities } from '../wire/mcp-types.ts'

const CAPABILITY_OF: Record<string, keyof ClientCapabilities> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
}

/**
 * The capability a child's request needs that the session's client did not declare, if any.
 * `capabilities` is undefined for a session that never sent initialize here: its client answers for itself.
 */
export function missingCapability(method: string, capabilities: ClientCapabilities | undefined): keyof ClientCapabilities | undefined {
  const needed = CAPABILITY_OF[method]
  return needed === undefined || capabilities === undefined || capabilities[needed] !== undefined ? undefined : needed
}

/** At most this many URL elicitations remembered for their completion notice (the oldest dropped first). */
const MAX_TRACKED_ELICITATIONS = 1024

interface Inbound<Session> { session: Session; childId: RequestId }

/** `Session` is the multiplexer's view of a session (PoolSession); only its identity matters here. */
export class ChildRequests<Session> {
  #next = 0
  readonly #byId = new Map<number, Inbound<Session>>()
  readonly #byChildId = new Map<RequestId, number>()
  readonly #elicitations = new Map<string, Session>()

  /** Requests of the child's still awaiting a session's answer (a child with any is not idle). */
  get size(): number {
    return this.#byId.size
  }

  /** True when a request of the child's awaits `session`'s answer. */
  has(session: Session): boolean {
    for (const inbound of this.#byId.values()) if (inbound.session === session) return true
    return false
  }

  /** Records the child's request `childId` for `session`; returns the id the session's client sees. */
  open(session: Session, childId: RequestId, elicitationId: string | undefined): number {
    const id = ++this.#next
    this.#byId.set(id, { session, childId })
    this.#byChildId.set(childId, id)
    if (elicitationId !== undefined) {
      if (this.#elicitations.size >= MAX_TRACKED_ELICITATIONS) this.#elicitations.delete(this.#elicitations.keys().next().value!)
      this.#elicitations.set(elicitationId, session)
    }
    return id
  }

  /** The child's id for the session's answer to `id`, or undefined when it answers nothing sent to that session. */
  answered(session: Session, id: unknown): RequestId | undefined {
    const inbound = typeof id === 'number' ? this.#byId.get(id) : undefined
    if (inbound === undefined || inbound.session !== session) return undefined
    this.#forget(id as number, inbound)
    return inbound.childId
  }

  /** The child cancelled its request `childId`: the session it went to and the id that session knows, if any. */
  cancelledByChild(childId: RequestId): { session: Session; id: number } | undefined {
    const id = this.#byChildId.get(childId)
    const inbound = id === undefined ? undefined : this.#byId.get(id)
    if (inbound === undefined) return undefined
    this.#forget(id!, inbound)
    return { session: inbound.session, id: id! }
  }

  /** The session a URL elicitation went to, once: its completion notice goes there and nowhere else. */
  elicitationCompleted(elicitationId: string): Session | undefined {
    const session = this.#elicitations.get(elicitationId)
    this.#elicitations.delete(elicitationId)
    return session
  }

  /** The session left: the child's ids of the requests it will now never answer (the child gets an error for each). */
  dropSession(session: Session): RequestId[] {
    const unanswered: RequestId[] = []
    for (const [id, inbound] of this.#byId) {
      if (inbound.session !== session) continue
      this.#forget(id, inbound)
      unanswered.push(inbound.childId)
    }
    for (const [elicitationId, owner] of this.#elicitations) if (owner === session) this.#elicitations.delete(elicitationId)
    return unanswered
  }

  /** The child is gone: every request still open, as (session, the id it knows); then nothing is tracked. */
  drain(): Array<[Session, number]> {
    const open = [...this.#byId].map(([id, inbound]): [Session, number] => [inbound.session, id])
    this.#byId.clear()
    this.#byChildId.clear()
    this.#elicitations.clear()
    return open
  }

  #forget(id: number, inbound: Inbound<Session>): void {
    this.#byId.delete(id)
    this.#byChildId.delete(inbound.childId)
  }
}
