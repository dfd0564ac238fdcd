/**
 * The limiter's counters in this process: for one worker (memory store), and in the cluster primary
 * for every worker of the host (limiter-cluster.ts). Every call is synchronous. Bounded: a sweep
 * drops buckets whose TAT has passed (they say nothing a fresh bucket would not) and forgets sessions
 * the store no longer has.
 */
import { fairShare, gcra, RECLAIM_CANDIDATES, RECLAIM_IDLE_MS, type LimitRequest, type Limiter, type Verdict } from './limiter.ts'

export interface MemoryLimiterOptions {
  /** Whether a session still exists (the session store's view); admitted sessions that do not stop counting. */
  alive: (sessionId: string) => boolean
  /** Milliseconds before a session expires unless touched (the store's view); orders `reclaim`'s candidates. */
  expiresIn?: (sessionId: string) => number | undefined
  /** Milliseconds between sweeps. */
  sweepIntervalMs?: number
}

/** `expiresIn` read from a store that knows each session's lifetime (the memory store). */
export function expiresInOf(store: { lifetime(id: string): { expiresInMs: number } | undefined }): (sessionId: string) => number | undefined {
  return (id) => store.lifetime(id)?.expiresInMs
}

export class MemoryLimiter implements Limiter {
  readonly #tats = new Map<string, number>()
  /** Per quota key, the sessions counted there (and when each was admitted). */
  readonly #sessions = new Map<string, Map<string, number>>()
  readonly #alive: (sessionId: string) => boolean
  readonly #expiresIn: (sessionId: string) => number | undefined
  readonly #sweeper: NodeJS.Timeout
  readonly #tat = (key: string): number | undefined => this.#tats.get(key)

  constructor(options: MemoryLimiterOptions) {
    this.#alive = options.alive
    this.#expiresIn = options.expiresIn ?? (() => undefined)
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

  reclaim(prefix: string, key: string, capacity: number, idleTtlMs: number): string[] {
    const own = this.#sessions.get(key)
    if (own !== undefined) this.#forgetEnded(own)
    const held = own?.size ?? 0
    // Only when the route is full: one pass over the quota keys, not a cost of every request.
    let heaviest: Map<string, number> | undefined
    let holders = 1
    for (const [name, sessions] of this.#sessions) {
      if (!name.startsWith(prefix) || sessions === own) continue
      this.#forgetEnded(sessions)
      if (sessions.size > 0) holders++
      if (sessions.size > (heaviest?.size ?? 0)) heaviest = sessions
    }
    if (held >= fairShare(capacity, holders) || heaviest === undefined || heaviest.size <= held + 1) return []
    // Time left is the idle TTL less the time since the last touch: unused long enough means little left.
    const idle: Array<[string, number]> = []
    for (const id of heaviest.keys()) {
      const left = this.#expiresIn(id)
      if (left !== undefined && idleTtlMs - left >= RECLAIM_IDLE_MS) idle.push([id, left])
    }
    return idle.sort((a, b) => a[1] - b[1]).slice(0, RECLAIM_CANDIDATES).map(([id]) => id)
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
