/**
 * A shared stdio child's resource subscriptions, per URI the sessions that asked for it. The child
 * holds one subscription per URI for all of them: a session that unsubscribes while others still
 * want the URI is answered here, and the child hears resources/unsubscribe when the last one goes.
 */
import type { PoolSession } from './stdio-pool-session.ts'

export class ChildSubscriptions {
  readonly #subscribers = new Map<string, Set<PoolSession>>()

  /** The child accepted `session`'s resources/subscribe to `uri`. */
  add(uri: string, session: PoolSession): void {
    let subscribers = this.#subscribers.get(uri)
    if (subscribers === undefined) this.#subscribers.set(uri, (subscribers = new Set()))
    subscribers.add(session)
  }

  /** The sessions to tell that `uri` was updated. */
  of(uri: string): Iterable<PoolSession> {
    return this.#subscribers.get(uri) ?? []
  }

  /** True when `session` is subscribed to anything here. */
  holds(session: PoolSession): boolean {
    for (const subscribers of this.#subscribers.values()) if (subscribers.has(session)) return true
    return false
  }

  /** `session`'s unsubscribe, true when it is answered here (others still want the URI: the child keeps it). */
  unsubscribeLocally(session: PoolSession, uri: string): boolean {
    const subscribers = this.#subscribers.get(uri)
    if (subscribers === undefined || !subscribers.has(session)) return false
    subscribers.delete(session)
    if (subscribers.size > 0) return true
    this.#subscribers.delete(uri)
    return false
  }

  /** The session left: the URIs nobody wants any more (the child is to unsubscribe them). */
  dropSession(session: PoolSession): string[] {
    const unwanted: string[] = []
    for (const [uri, subscribers] of this.#subscribers) {
      if (!subscribers.delete(session) || subscribers.size > 0) continue
      this.#subscribers.delete(uri)
      unwanted.push(uri)
    }
    return unwanted
  }

  clear(): void {
    this.#subscribers.clear()
  }
}
