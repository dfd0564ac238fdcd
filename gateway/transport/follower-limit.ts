/**
 * How many resumed streams (GET with Last-Event-ID on a request's stream) one session may hold on this
 * worker: each holds a connection, a bus subscription and probe timers, so a client replaying ids
 * must not be able to open them without bound. A place is taken when the resumed stream opens and
 * given back when its connection closes.
 */
import type { ServerResponse } from 'node:http'

export class FollowerLimit {
  readonly max: number
  readonly #held = new Map<string, number>()

  constructor(max: number) {
    this.max = max
  }

  /** Takes a place for `sessionId`, given back when `raw` closes; false (nothing taken) when the session holds `max`. */
  enter(sessionId: string, raw: ServerResponse): boolean {
    const held = this.#held.get(sessionId) ?? 0
    if (held >= this.max) return false
    this.#held.set(sessionId, held + 1)
    raw.once('close', () => {
      const left = (this.#held.get(sessionId) ?? 1) - 1
      if (left <= 0) this.#held.delete(sessionId)
      else this.#held.set(sessionId, left)
    })
    return true
  }

  /** Places `sessionId` holds now (for tests and metrics). */
  held(sessionId: string): number {
    return this.#held.get(sessionId) ?? 0
  }
}
