/**
 * A full route's fair share (docs/limits-and-errors.md): when a route is at `max_sessions`, a client under its
 * share gets a session by ending the least recently used idle session of the client that holds the
 * most (the limiter names the candidates: store/limiter.ts `reclaim`). Idle means no request in
 * flight and no open stream on any worker: each worker keeps touching its busy sessions, so a busy
 * session was seen within `RECLAIM_IDLE_MS` and the limiter never offers it; this worker also skips
 * a candidate it sees busy itself.
 */
import type { Logger } from 'pino'
import { BUSY_TOUCH_MS } from '../store/limiter.ts'
import type { SessionStore } from '../store/store.ts'
import type { LiveSessions } from './live-sessions.ts'

export class FairShare {
  readonly #live: LiveSessions
  readonly #end: (id: string) => Promise<boolean>
  readonly #logger: Logger
  readonly #toucher: NodeJS.Timeout

  constructor(live: LiveSessions, store: SessionStore, end: (id: string) => Promise<boolean>, logger: Logger) {
    this.#live = live
    this.#end = end
    this.#logger = logger
    // Only sessions with something in flight are in `live`: a few, and the store coalesces touches.
    this.#toucher = setInterval(() => {
      for (const id of live.ids()) store.touch(id)
    }, BUSY_TOUCH_MS)
    this.#toucher.unref()
  }

  /** Ends the first of `candidates` that is idle here; false when none is (or all ended meanwhile). */
  async reclaim(candidates: readonly string[]): Promise<boolean> {
    for (const id of candidates) {
      const live = this.#live.get(id)
      if (live !== undefined && !live.idle) continue
      if (!(await this.#end(id))) continue
      this.#logger.info({ sessionId: id }, 'session ended at max_sessions: its client held more than its fair share')
      return true
    }
    return false
  }

  close(): void {
    clearInterval(this.#toucher)
  }
}
