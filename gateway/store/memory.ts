/**
 * The one-process store: sessions, event logs and the bus in this worker's memory.
 * The default for `workers: 1`. Records are held and returned as they are (no copies), so the hot
 * path's `get` costs a Map lookup.
 *
 * The event logs are bounded by count (`event_capacity`), age (`cache_ttl`, also swept, so a log
 * nobody appends to or replays is freed after it) and size: `event_bytes` per session and
 * `event_bytes_total` for the store. An event's size is its data's length (characters; one byte each
 * for the ASCII of JSON). Over the total, the largest logs lose their oldest events first, down to
 * three quarters of the total, so the work is done once per many appends.
 *
 * The sessions' own data (capabilities and clientInfo as created, subscribed URIs, hidden component
 * names, the session's documents) is counted too, against `session_bytes_total`: over it a new
 * session, subscription, hidden component or larger document is refused (503, Retry-After), and each
 * session's share is given back when it ends. One principal's sessions together hold at most
 * `session_bytes_per_principal` (429: that principal ends a session first), so one token filling
 * its sessions to their caps cannot take the whole total. Sessions without a principal (open routes)
 * count only against the total; their number per address is bounded by the session quota.
 */
import type { Bus, BusMessage, DocOwner, DocWrite, SessionChange, SessionDocName, SessionRecord, SessionStore, StoredDoc, StoredEvent } from './store.ts'
import { applyChange } from './session-change.ts'
import { EdgeError } from '../wire/errors.ts'
import { DEFAULT_EVENT_BYTES, DEFAULT_EVENT_BYTES_TOTAL, DEFAULT_SESSION_BYTES_PER_PRINCIPAL, DEFAULT_SESSION_BYTES_TOTAL, eventId, parseEventId } from './store.ts'

const jsonLength = (value: unknown): number => JSON.stringify(value)?.length ?? 0
const listLength = (list: readonly string[]): number => list.reduce((sum, item) => sum + item.length, 0)
import { MemoryTaskTable } from './task-table-memory.ts'
import { MemoryCacheTable } from './cache-table-memory.ts'

interface Entry {
  record: SessionRecord
  idleTtlMs: number
  lastSeen: number
  nextSeq: number
  events: LoggedEvent[]
  /** The size of `events` (their data's length). */
  eventBytes: number
  /** The session's own data: capabilities and clientInfo (JSON), subscriptions, hidden names, documents. */
  dataBytes: number
  /** The session's documents (catalogue, state); made on the first write. */
  docs?: Map<SessionDocName, StoredDoc>
}

interface LoggedEvent extends StoredEvent {
  readonly stream: string
  readonly seq: number
  readonly at: number
}

export interface MemoryStoreOptions {
  /** Most events kept per session for replay. */
  eventCapacity: number
  /** Seconds an event stays replayable. */
  cacheTtl: number
  /** Most bytes of event data kept per session (its newest event is kept whatever its size). */
  eventBytes?: number
  /** Most bytes of event data kept by the store in all. */
  eventBytesTotal?: number
  /** Most bytes of sessions' own data kept by the store in all. */
  sessionBytesTotal?: number
  /** Most bytes of sessions' own data one principal's sessions keep together. */
  sessionBytesPerPrincipal?: number
  /** Milliseconds between sweeps of expired sessions. */
  sweepIntervalMs?: number
}

/** In-process listeners keyed by channel; publish delivers on the next microtask, as a remote bus would. */
export class MemoryBus implements Bus {
  readonly #listeners = new Map<string, Set<(message: BusMessage) => void>>()

  async publish(channel: string, message: BusMessage): Promise<void> {
    await undefined
    const listeners = this.#listeners.get(channel)
    if (listeners === undefined) return
    for (const listener of listeners) listener(message)
  }

  subscribe(channel: string, listener: (message: BusMessage) => void): () => void {
    let listeners = this.#listeners.get(channel)
    if (listeners === undefined) this.#listeners.set(channel, (listeners = new Set()))
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
      if (listeners.size === 0) this.#listeners.delete(channel)
    }
  }
}

export class MemoryStore implements SessionStore {
  readonly bus = new MemoryBus()
  readonly tasks = new MemoryTaskTable()
  readonly cache = new MemoryCacheTable()
  readonly #sessions = new Map<string, Entry>()
  readonly #byRoute = new Map<string, Set<string>>()
  /** Route documents, by route location (one name so far: the catalogue). */
  readonly #routeDocs = new Map<string, StoredDoc>()
  /** Per route, a time before which no session of it can have expired (see count). */
  readonly #earliestExpiry = new Map<string, number>()
  readonly #eventCapacity: number
  readonly #eventTtlMs: number
  readonly #eventBytes: number
  readonly #eventBytesTotal: number
  /** The size of every session's event log together. */
  #heldEventBytes = 0
  readonly #sessionBytesTotal: number
  /** The size of every session's own data together. */
  #heldDataBytes = 0
  readonly #sessionBytesPerPrincipal: number
  /** The size of each principal's sessions' own data (sessions without a principal are not here). */
  readonly #principalBytes = new Map<string, number>()
  readonly #sweeper: NodeJS.Timeout

  constructor(options: MemoryStoreOptions) {
    this.#eventCapacity = options.eventCapacity
    this.#eventTtlMs = options.cacheTtl * 1000
    this.#eventBytes = options.eventBytes ?? DEFAULT_EVENT_BYTES
    this.#eventBytesTotal = options.eventBytesTotal ?? DEFAULT_EVENT_BYTES_TOTAL
    this.#sessionBytesTotal = options.sessionBytesTotal ?? DEFAULT_SESSION_BYTES_TOTAL
    this.#sessionBytesPerPrincipal = options.sessionBytesPerPrincipal ?? DEFAULT_SESSION_BYTES_PER_PRINCIPAL
    this.#sweeper = setInterval(() => this.#sweep(), options.sweepIntervalMs ?? 5000)
    this.#sweeper.unref()
  }

  async create(record: SessionRecord, idleTtlMs: number): Promise<void> {
    if (this.#live(record.id) !== undefined) throw new Error(`session ${record.id} already exists`)
    const dataBytes = jsonLength(record.clientCapabilities) + jsonLength(record.clientInfo) + listLength(record.subscriptions) + listLength(record.hidden)
    this.#reserve(dataBytes, record.principal)
    this.#sessions.set(record.id, { record, idleTtlMs, lastSeen: Date.now(), nextSeq: 1, events: [], eventBytes: 0, dataBytes })
    let ids = this.#byRoute.get(record.route)
    if (ids === undefined) this.#byRoute.set(record.route, (ids = new Set()))
    ids.add(record.id)
    const expiry = Date.now() + idleTtlMs
    if (expiry < (this.#earliestExpiry.get(record.route) ?? Infinity)) this.#earliestExpiry.set(record.route, expiry)
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return this.#live(id)?.record
  }

  peek(id: string): SessionRecord | undefined {
    return this.#live(id)?.record
  }

  async update(id: string, change: SessionChange): Promise<SessionRecord | undefined> {
    const entry = this.#live(id)
    if (entry === undefined) return undefined
    const list = 'subscribe' in change || 'unsubscribe' in change ? entry.record.subscriptions : 'hide' in change || 'show' in change ? entry.record.hidden : undefined
    const value = 'subscribe' in change ? change.subscribe : 'unsubscribe' in change ? change.unsubscribe : 'hide' in change ? change.hide : 'show' in change ? change.show : ''
    const before = list?.length ?? 0
    if (('subscribe' in change || 'hide' in change) && !list!.includes(value) && before < (change.max ?? Infinity)) this.#reserve(value.length, entry.record.principal)
    applyChange(entry.record, change)
    if (list !== undefined && list.length !== before) {
      const delta = list.length > before ? value.length : -value.length
      entry.dataBytes += delta
      if (delta < 0) this.#release(-delta, entry.record.principal)
    }
    return entry.record
  }

  /** The bytes of sessions' own data the store holds, all sessions together (for tests and metrics). */
  get heldDataBytes(): number {
    return this.#heldDataBytes
  }

  /** The bytes of session data `principal`'s sessions hold together (for tests and metrics). */
  principalDataBytes(principal: string): number {
    return this.#principalBytes.get(principal) ?? 0
  }

  /**
   * Counts `bytes` more of `principal`'s session data; throws when that would pass
   * `session_bytes_per_principal` (429: that principal's own doing) or `session_bytes_total` (503).
   */
  #reserve(bytes: number, principal: string | undefined): void {
    const held = principal === undefined ? 0 : (this.#principalBytes.get(principal) ?? 0)
    if (principal !== undefined && held + bytes > this.#sessionBytesPerPrincipal) {
      throw new EdgeError('MCP_EDGE_PRINCIPAL_SESSION_DATA_FULL',
        `Too Many Requests: this client's sessions hold ${this.#sessionBytesPerPrincipal} bytes of data (store.session_bytes_per_principal); end a session first`)
    }
    if (this.#heldDataBytes + bytes > this.#sessionBytesTotal) {
      throw new EdgeError('MCP_EDGE_SESSION_DATA_FULL',
        `Service Unavailable: the sessions of this gateway hold ${this.#sessionBytesTotal} bytes of data (store.session_bytes_total); retry later`)
    }
    this.#heldDataBytes += bytes
    if (principal !== undefined) this.#principalBytes.set(principal, held + bytes)
  }

  /** Gives back `bytes` of `principal`'s session data. */
  #release(bytes: number, principal: string | undefined): void {
    this.#heldDataBytes -= bytes
    if (principal === undefined) return
    const left = (this.#principalBytes.get(principal) ?? 0) - bytes
    if (left > 0) this.#principalBytes.set(principal, left)
    else this.#principalBytes.delete(principal)
  }

  touch(id: string): void {
    // As #live does: a touch must not bring back a session whose TTL already ran out. One clock read
    // for the check and the new lastSeen (each Date.now is a call into V8's runtime, on every request).
    const entry = this.#sessions.get(id)
    if (entry === undefined) return
    const now = Date.now()
    if (now - entry.lastSeen > entry.idleTtlMs) this.#remove(entry)
    else entry.lastSeen = now
  }

  async delete(id: string): Promise<boolean> {
    const entry = this.#live(id)
    if (entry === undefined) return false
    this.#remove(entry)
    return true
  }

  /**
   * Exact, and O(1) until a session of the route may have expired: initialize calls it for
   * max_sessions, and walking every session each time made creating n sessions cost n². Touches only
   * postpone expiry, so the remembered earliest expiry can be early, never late.
   */
  async count(route: string): Promise<number> {
    const ids = this.#byRoute.get(route)
    if (ids === undefined) return 0
    const now = Date.now()
    if (now < (this.#earliestExpiry.get(route) ?? 0)) return ids.size
    let earliest = Infinity
    for (const id of ids) {
      const entry = this.#live(id)
      if (entry !== undefined) earliest = Math.min(earliest, entry.lastSeen + entry.idleTtlMs)
    }
    this.#earliestExpiry.set(route, earliest)
    return ids.size
  }

  async sessionIds(route: string): Promise<string[]> {
    const ids = this.#byRoute.get(route)
    return ids === undefined ? [] : [...ids].filter((id) => this.#live(id) !== undefined)
  }

  async append(sessionId: string, stream: string, data: string): Promise<string> {
    return this.appendNow(sessionId, stream, data)
  }

  appendNow(sessionId: string, stream: string, data: string): string {
    const entry = this.#live(sessionId)
    const seq = entry === undefined ? 0 : entry.nextSeq++
    const id = eventId(stream, seq)
    if (entry === undefined) return id
    const now = Date.now()
    entry.events.push({ id, data, stream, seq, at: now })
    entry.eventBytes += data.length
    this.#heldEventBytes += data.length
    this.#trim(entry, now, true)
    if (this.#heldEventBytes > this.#eventBytesTotal) this.#shrinkLogs()
    return id
  }

  /** The bytes of event data the store holds, all sessions together (for tests and metrics). */
  get heldEventBytes(): number {
    return this.#heldEventBytes
  }

  async replay(sessionId: string, afterId: string): Promise<{ stream: string; events: StoredEvent[] } | undefined> {
    const after = parseEventId(afterId)
    const entry = this.#live(sessionId)
    if (after === undefined || entry === undefined || after.seq >= entry.nextSeq) return undefined
    this.#trim(entry, Date.now())
    const events: StoredEvent[] = []
    let known = false
    for (const event of entry.events) {
      if (event.stream !== after.stream) continue
      known = true
      if (event.seq > after.seq) events.push({ id: event.id, data: event.data })
    }
    return known ? { stream: after.stream, events } : undefined
  }

  async readDoc(owner: DocOwner): Promise<StoredDoc | undefined> {
    if ('route' in owner) return this.#routeDocs.get(owner.route)
    return this.#live(owner.session)?.docs?.get(owner.name)
  }

  async writeDoc(owner: DocOwner, expected: number, value: string): Promise<DocWrite> {
    if ('route' in owner) {
      const version = this.#routeDocs.get(owner.route)?.version ?? 0
      if (version !== expected) return 'conflict'
      this.#routeDocs.set(owner.route, { version: version + 1, value })
      return { version: version + 1 }
    }
    const entry = this.#live(owner.session)
    if (entry === undefined) return 'gone'
    const docs = (entry.docs ??= new Map())
    const previous = docs.get(owner.name)
    const version = previous?.version ?? 0
    if (version !== expected) return 'conflict'
    const delta = value.length - (previous?.value.length ?? 0)
    if (delta > 0) this.#reserve(delta, entry.record.principal)
    else this.#release(-delta, entry.record.principal)
    entry.dataBytes += delta
    docs.set(owner.name, { version: version + 1, value })
    return { version: version + 1 }
  }

  /** The session's idle TTL and the milliseconds left before it expires unless touched (the cluster primary tells workers, for their caches). */
  lifetime(id: string): { idleTtlMs: number; expiresInMs: number } | undefined {
    const entry = this.#live(id)
    return entry === undefined ? undefined : { idleTtlMs: entry.idleTtlMs, expiresInMs: entry.lastSeen + entry.idleTtlMs - Date.now() }
  }

  async ready(): Promise<boolean> {
    return true
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper)
    this.tasks.close()
    this.cache.close()
    this.#sessions.clear()
    this.#heldEventBytes = 0
    this.#heldDataBytes = 0
    this.#principalBytes.clear()
    this.#byRoute.clear()
    this.#routeDocs.clear()
    this.#earliestExpiry.clear()
  }

  #live(id: string): Entry | undefined {
    const entry = this.#sessions.get(id)
    if (entry === undefined) return undefined
    if (Date.now() - entry.lastSeen > entry.idleTtlMs) {
      this.#remove(entry)
      return undefined
    }
    return entry
  }

  #remove(entry: Entry): void {
    this.#sessions.delete(entry.record.id)
    this.#heldEventBytes -= entry.eventBytes
    this.#release(entry.dataBytes, entry.record.principal)
    const ids = this.#byRoute.get(entry.record.route)
    ids?.delete(entry.record.id)
    if (ids?.size === 0) this.#byRoute.delete(entry.record.route)
  }

  /**
   * Drops events beyond the capacity, over the session's bytes or older than the cache TTL (oldest
   * first, so a prefix; the newest event stays whatever its size). Called on append with `lazy`: it
   * then waits until a quarter of the capacity is over, so a full log is cut once per many appends
   * instead of shifting the whole array on each one; the bytes are never let over.
   */
  #trim(entry: Entry, now: number, lazy = false): void {
    const events = entry.events
    if (lazy && entry.eventBytes <= this.#eventBytes && events.length <= this.#eventCapacity + (this.#eventCapacity >> 2) &&
      now - (events[0]?.at ?? now) <= this.#eventTtlMs + 1000) return
    let drop = Math.max(0, events.length - this.#eventCapacity)
    let bytes = 0
    for (let n = 0; n < drop; n++) bytes += events[n]!.data.length
    while (drop < events.length - 1 && entry.eventBytes - bytes > this.#eventBytes) bytes += events[drop++]!.data.length
    while (drop < events.length && now - events[drop]!.at > this.#eventTtlMs) bytes += events[drop++]!.data.length
    this.#dropEvents(entry, drop, bytes)
  }

  #dropEvents(entry: Entry, count: number, bytes: number): void {
    if (count === 0) return
    if (count === entry.events.length) entry.events = []
    else entry.events.splice(0, count)
    entry.eventBytes -= bytes
    this.#heldEventBytes -= bytes
  }

  /**
   * Over `event_bytes_total`: the largest logs are cut to one size (their oldest events first), the
   * size at which the store holds three quarters of the total; smaller logs keep what they have.
   */
  #shrinkLogs(): void {
    const target = this.#eventBytesTotal * 0.75
    const logs = [...this.#sessions.values()].filter((entry) => entry.eventBytes > 0).sort((a, b) => b.eventBytes - a.eventBytes)
    // cap: the k largest cut to it, and the rest as they are, hold the target.
    let rest = this.#heldEventBytes
    let cap = 0
    for (let k = 1; k <= logs.length; k++) {
      rest -= logs[k - 1]!.eventBytes
      cap = (target - rest) / k
      if (k === logs.length || cap >= logs[k]!.eventBytes) break
    }
    for (const entry of logs) {
      if (entry.eventBytes <= cap) break
      let drop = 0
      let bytes = 0
      while (drop < entry.events.length && entry.eventBytes - bytes > cap) bytes += entry.events[drop++]!.data.length
      this.#dropEvents(entry, drop, bytes)
    }
  }

  /** Ends expired sessions and drops expired events, so a log nobody reads or appends to is freed after cache_ttl. */
  #sweep(): void {
    const now = Date.now()
    for (const id of this.#sessions.keys()) {
      const entry = this.#live(id)
      if (entry !== undefined && entry.events.length > 0 && now - entry.events[0]!.at > this.#eventTtlMs) this.#trim(entry, now)
    }
  }
}
