/**
 * The store's cache table: what the list cache (upstream/list-cache.ts) and the result cache
 * (registry/result-cache.ts) keep for every worker and host. Entries are opaque text with a TTL,
 * bounded in bytes per route and in total and in count per principal; a write over a bound evicts
 * the oldest entries of what is full (the route's, everyone's, or that principal's) first.
 *
 *   read([keys], [groups]) ──► values, and each group's generation
 *   write(entry, generation) ──► kept only if the group's generation is still that one
 *   drop(group) ──► every entry of the group gone, its generation moved on
 *
 * The generation makes a fetch that was in flight when its group was dropped (an upstream said
 * list_changed) unable to write the stale answer back. Backends: memory (cache-table-memory.ts, also
 * the cluster primary's), Redis (cache-table-redis.ts).
 */

/** One entry to keep. */
export interface CacheWrite {
  readonly key: string
  readonly value: string
  readonly ttlMs: number
  /** The route it belongs to: its bytes count toward that route's bound. */
  readonly route: string
  /** What one `drop` removes together (an upstream's lists on a route, a route's results). */
  readonly group: string
  /** The principal a private entry belongs to: its entries count toward `principalEntries`. */
  readonly principal?: string | undefined
}

/** The bounds a write is held to (the gateway's `limits`). */
export interface CacheBounds {
  /** Bytes (keys and values) one route's entries may hold. */
  readonly routeBytes: number
  /** Bytes every route's entries may hold together. */
  readonly totalBytes: number
  /** Entries one principal's private entries may number, over all routes. */
  readonly principalEntries: number
}

/** What a read found: a value per key (undefined: absent or expired) and a generation per group. */
export interface CacheRead {
  readonly values: Array<string | undefined>
  readonly generations: number[]
}

export interface CacheTable {
  read(keys: readonly string[], groups: readonly string[]): Promise<CacheRead>
  /** Keeps the entry unless its group moved past `generation` or it alone exceeds a byte bound; true when kept. */
  write(entry: CacheWrite, generation: number, bounds: CacheBounds): Promise<boolean>
  /** Drops every entry of `group` and moves its generation on. */
  drop(group: string): Promise<void>
  /** Bytes held by `route`'s entries and by all (for tests and the admin view). */
  usage(route: string): Promise<{ route: number; total: number; entries: number }>
}

/** The bytes an entry counts for: its key and value, as UTF-8. */
export function entryBytes(key: string, value: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(value)
}
