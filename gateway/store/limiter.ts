/**
 * The limiter: the counters behind rate limits and sessions per principal (edge/limits.ts decides
 * what to count; this counts). It lives where sessions live, with the same three backends, so a limit
 * holds on every worker and host: `limiter-memory.ts` (one process, and the cluster primary's side),
 * `limiter-cluster.ts` (workers ask the primary over the store's IPC channel), `limiter-redis.ts`
 * (one Lua script per check, one round trip, shared by every host). Requests in flight per session
 * are not counted here: each process counts its own (edge/limits.ts says why).
 *
 *   take({ transport buckets │ tool buckets }) ─► GCRA on each part, all-or-nothing per part
 *        ─► transport refused: nothing charged │ tool refused: transport charged
 *
 * Rates use GCRA (the generic cell rate algorithm): one number per bucket, the theoretical arrival
 * time (TAT) of the next request. A bucket of `limit` per `window` lets `limit` requests through at
 * once, then one every `window / limit`: exactly `limit` in any window that starts empty.
 */

/** One GCRA bucket: `key` names whose allowance it is; `intervalMs` is window / limit. */
export interface RateBucket {
  readonly key: string
  readonly intervalMs: number
  readonly windowMs: number
}

/** What one request asks of the limiter, in one call (one round trip on a shared backend). */
export interface LimitRequest {
  /** The buckets before `toolStart` are the transport's, the rest the tool's; each part passes or fails whole. */
  readonly buckets: readonly RateBucket[]
  readonly toolStart: number
}

/** A refusal: `bucket` is the index of the bucket that refused; retry after `retryAfterMs`. */
export interface Refusal {
  readonly bucket: number
  readonly retryAfterMs: number
}

/** undefined: allowed (and charged). */
export type Verdict = Refusal | undefined

export interface Limiter {
  /** Checks and charges; synchronous when the counters are in this process (the hot path makes no promise). */
  take(request: LimitRequest): Verdict | Promise<Verdict>
  /**
   * Counts session `sessionId` (already in the session store) under `key` unless `max` live sessions
   * are counted there already; a counted session the store no longer has stops counting (ended, expired).
   */
  admit(key: string, sessionId: string, max: number): boolean | Promise<boolean>
  /**
   * A full route's fair share (docs/limits-and-errors.md): `capacity` (max_sessions) shared evenly by the keys
   * under `prefix` (a route's quota keys) that count sessions, `key` included. When `key` counts
   * fewer than its share and at least two fewer than the heaviest other key, that key's sessions,
   * least recently used first (at most `RECLAIM_CANDIDATES`), each unused for `RECLAIM_IDLE_MS` at
   * least (sessions live `idleTtlMs` without a touch); else none. Only a session creation at a full
   * route asks: no request of a known session pays for it.
   */
  reclaim(prefix: string, key: string, capacity: number, idleTtlMs: number): string[] | Promise<string[]>
  close(): Promise<void>
}

/**
 * How long a session must go unused before a full route may end it for a client under its fair share.
 * Every worker touches its sessions with a request in flight or an open stream every
 * `BUSY_TOUCH_MS` (store/record-cache.ts coalesces touches over at most 5 s), so a busy session on any
 * worker or host was seen within 7.5 s and is never a candidate.
 */
export const RECLAIM_IDLE_MS = 15_000
export const BUSY_TOUCH_MS = 2_500

/** How many sessions of the heaviest client `reclaim` offers: the caller skips those busy on its worker. */
export const RECLAIM_CANDIDATES = 8

/** A client's fair share of a full route's `capacity` when `holders` clients (the asking one included) hold sessions there. */
export function fairShare(capacity: number, holders: number): number {
  return Math.ceil(capacity / Math.max(1, holders))
}

/** How long a quota key's session set outlives its last admission (a day: far beyond any idle TTL). */
export const ADMIT_TTL_MS = 86_400_000

/**
 * GCRA on the buckets `[from, to)` of `request` at time `now`, against `tats` (read by key); returns
 * the index of the first bucket that refuses with the wait, or the new TATs to write.
 */
export function gcra(
  buckets: readonly RateBucket[],
  from: number,
  to: number,
  now: number,
  tat: (key: string) => number | undefined,
): Refusal | number[] {
  const next: number[] = []
  for (let i = from; i < to; i++) {
    const bucket = buckets[i]!
    const arrival = Math.max(tat(bucket.key) ?? now, now) + bucket.intervalMs
    const allowedAt = arrival - bucket.windowMs
    if (allowedAt > now) return { bucket: i, retryAfterMs: Math.ceil(allowedAt - now) }
    next.push(arrival)
  }
  return next
}
