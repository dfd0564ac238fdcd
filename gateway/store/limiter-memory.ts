/**
 * The limiter's counters in this process: for one worker (memory store), and in the cluster primary
 * for every worker of the host (limiter-cluster.ts). Every call is synchronous. Bounded: a sweep
 * drops buckets whose TAT has passed (they say nothing a fresh bucket would not) and forgets sessions
 * the store no longer has.
 */
import { gcra, type LimitRequest, type Limiter, type Verdict } from './limiter.ts'

export interface MemoryLimiterOptions {
  /** Whether a session still exists (the session store's view); admitted sessions that do not stop counting. */
  alive: (sessionId: string) => boolean
  /** Milliseconds between sweeps. */
  sweepIntervalMs?: number
}

export class MemoryLimiter implements Limiter {
  readonly #tats = new Map<string, number>()
  /** Per quota key, the sessions counted there (and when each was admitted). */
  readonly #sessions = new Map<string, Map<string, number>>()
  readonly #alive: (sessionId: string) => boolean
  readonly #sweeper: NodeJS.Timeout
  readonly #tat = (key: string): number | undefined => this.#tats.get(key)

  constructor(options: MemoryLimiterOptions) {
    this.#alive = options.alive
    this.#sweeper = setInterval(() => this.#sweep(), options.sweepIntervalMs ?? 10_000)
    this.#sweeper.unref()
  }

  take(request: LimitRequest): Verdict {
    const now = Date.now()
    const { buckets, toolStart } = request
    if (buckets.length > 0) {
      const transport = gcra(buckets, 0, toolStart, now, this.#tat)
      if (!Array.isArray(transport)) return transport
      this.#write(buckets, 0, transport)
      const tool = gcra(buckets, toolStart, buckets.length, now, this.#tat)
      if (!Array.isArray(tool)) return tool
      this.#write(buckets, toolStart, tool)
    }
    return undefined
  }

  admit(key: string, sessionId: string, max: number): boolean {
    const now = Date.now()
    let sessions = this.#sessions.get(key)
    if (sessions === undefined) this.#sessions.set(key, (sessions = new Map()))
    if (sessions.size >= max) this.#forgetEnded(sessions)
    if (sessions.size >= max) return false
    sessions.set(sessionId, now)
    return true
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper)
  }

  #write(buckets: LimitRequest['buckets'], from: number, tats: number[]): void {
    for (let i = 0; i < tats.length; i++) this.#tats.set(buckets[from + i]!.key, tats[i]!)
  }

  #forgetEnded(sessions: Map<string, number>): void {
    for (const id of sessions.keys()) if (!this.#alive(id)) sessions.delete(id)
  }

  #sweep(): void {
    const now = Date.now()
    for (const [key, tat] of this.#tats) if (tat <= now) this.#tats.delete(key)
    for (const [key, sessions] of this.#sessions) {
      this.#forgetEnded(sessions)
      if (sessions.size === 0) this.#sessions.delete(key)
    }
  }
}
