/**
 * A worker's copy of the session records it has read from a shared store (the cluster primary or
 * Redis), kept coherent by invalidations that the store pushes on every update and delete. A cached
 * record is served without a store call until an invalidation touches it or its idle TTL may have run
 * out; it also carries the state that coalesces `touch` (one TTL refresh per session per window).
 *
 *   get(id) ──► fresh entry? ──yes──► record (no store call)
 *                  │ no
 *                  ▼
 *              one read (shared by concurrent gets) ──► cached unless invalidated meanwhile
 *
 * Versions make the race between a read and an invalidation safe when they travel on different
 * connections (Redis): an invalidation names the version it makes stale, and a read that was in
 * flight when it arrived is cached only if it saw that version or a later one.
 */
import type { SessionRecord } from './store.ts'

/** What a backend's read returns: the record, its version, and how long until it expires unless touched. */
export interface LoadedRecord {
  record: SessionRecord
  version: number
  idleTtlMs: number
  expiresInMs: number
}

interface Entry {
  record: SessionRecord
  version: number
  idleTtlMs: number
  expiresAt: number
  touchedAt: number
}

interface Pending {
  promise: Promise<SessionRecord | undefined>
  /** The lowest version the read may cache: raised by invalidations that arrive while it runs. */
  floor: number
}

/** Longest time between two TTL refreshes of one session from one worker. */
const TOUCH_WINDOW_MS = 5000
/** Entries kept before the oldest are dropped (a bound, not a working-set estimate). */
const MAX_ENTRIES = 100_000

/** An invalidation of every version: the session was deleted, or the sender does not know versions. */
export const ALL_VERSIONS = Number.POSITIVE_INFINITY

export class RecordCache {
  readonly #entries = new Map<string, Entry>()
  readonly #pending = new Map<string, Pending>()
  #enabled: boolean

  /** `enabled` false until the backend knows it receives invalidations (see `enable`). */
  constructor(enabled = true) {
    this.#enabled = enabled
  }

  /** The cached record while it is fresh; undefined when only a read can tell. */
  peek(id: string): SessionRecord | undefined {
    if (!this.#enabled) return undefined
    const entry = this.#entries.get(id)
    return entry !== undefined && entry.expiresAt > Date.now() ? entry.record : undefined
  }

  /** The record from the cache, or from `read` (one read however many gets wait for it). */
  get(id: string, read: () => Promise<LoadedRecord | undefined>): Promise<SessionRecord | undefined> {
    const entry = this.#entries.get(id)
    if (entry !== undefined && this.#enabled) {
      if (entry.expiresAt > Date.now()) return Promise.resolve(entry.record)
      this.#entries.delete(id)
    }
    const running = this.#pending.get(id)
    if (running !== undefined) return running.promise
    const pending: Pending = { promise: undefined as never, floor: 0 }
    pending.promise = read().then(
      (loaded) => {
        this.#pending.delete(id)
        if (loaded === undefined) {
          this.#entries.delete(id)
          return undefined
        }
        if (loaded.version >= pending.floor) this.put(id, loaded)
        return loaded.record
      },
      (error: unknown) => {
        this.#pending.delete(id)
        throw error
      },
    )
    this.#pending.set(id, pending)
    return pending.promise
  }

  /** Caches a record the backend just wrote or read (create, update). */
  put(id: string, loaded: LoadedRecord): void {
    if (!this.#enabled) return
    const now = Date.now()
    const previous = this.#entries.get(id)
    if (previous !== undefined && previous.version > loaded.version) return
    this.#entries.delete(id)
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(id, {
      record: loaded.record,
      version: loaded.version,
      idleTtlMs: loaded.idleTtlMs,
      expiresAt: now + loaded.expiresInMs,
      touchedAt: previous?.touchedAt ?? now + loaded.expiresInMs - loaded.idleTtlMs,
    })
  }

  /** Drops the cached record if older than `version` (the version the change produced); a read in flight will not cache anything older. */
  invalidate(id: string, version: number = ALL_VERSIONS): void {
    const entry = this.#entries.get(id)
    if (entry !== undefined && entry.version < version) this.#entries.delete(id)
    const pending = this.#pending.get(id)
    if (pending !== undefined) pending.floor = Math.max(pending.floor, version)
  }

  /**
   * Whether a touch of `id` should reach the store now: false when this worker refreshed the TTL less
   * than a window ago (a tenth of the TTL, at most 5 s). Unknown sessions always go through.
   */
  touchDue(id: string, now = Date.now()): boolean {
    const entry = this.#entries.get(id)
    if (entry === undefined) return true
    const window = Math.min(TOUCH_WINDOW_MS, entry.idleTtlMs / 10)
    if (now - entry.touchedAt < window) return false
    entry.touchedAt = now
    return true
  }

  /** Records a TTL refresh the store confirmed at `at`, so the cached record lives on. */
  touched(id: string, at: number): void {
    const entry = this.#entries.get(id)
    if (entry !== undefined) entry.expiresAt = Math.max(entry.expiresAt, at + entry.idleTtlMs)
  }

  /** Stops serving from the cache (invalidations may be lost: the bus is down); drops everything. */
  disable(): void {
    this.#enabled = false
    this.clear()
  }

  /** Serves from the cache again, starting empty (what was missed while disabled is unknown). */
  enable(): void {
    this.clear()
    this.#enabled = true
  }

  clear(): void {
    this.#entries.clear()
    for (const pending of this.#pending.values()) pending.floor = ALL_VERSIONS
  }
}
