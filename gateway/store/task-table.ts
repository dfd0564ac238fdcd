/**
 * The store's table of task records (gateway/tasks/): small versioned entries with a TTL, written by
 * compare-and-set so that two workers racing on one task (a completion and a cancellation, two
 * tasks/update calls) never lose a transition, and indexed by owner (a session, a principal) for
 * tasks/list. The store keeps them as opaque text; what they mean lives in gateway/tasks/.
 * Backends: memory (task-table-memory.ts, also the cluster primary's), Redis (task-table-redis.ts).
 */

/** One entry: its text and the version the next compare-and-set names. */
export interface TaskEntry {
  readonly version: number
  readonly data: string
}

export interface TaskTable {
  /** The entry at `key`, or undefined when it is absent or expired. */
  read(key: string): Promise<TaskEntry | undefined>
  /**
   * Writes `data` at `key`, expiring `ttlMs` from now, when the entry's version is `expected` (0: no
   * entry). Returns the new version, or 0 when another write came first. With `owner`, the key is
   * listed under it (until the entry expires).
   */
  write(key: string, data: string, expected: number, ttlMs: number, owner?: string): Promise<number>
  /** The text of the live entries listed under `owner`, at most `max`, in no promised order. */
  list(owner: string, max: number): Promise<string[]>
  /** How many live entries are listed under `owner` (one round trip, whatever their size). */
  count(owner: string): Promise<number>
}
