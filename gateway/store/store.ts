/**
 * The session store: what every worker must agree on about a session, plus the event log for SSE
 * replay and the bus between workers. `memory.ts` is the one-process backend; the cluster-primary and
 * Redis backends implement the same interface and run the same contract tests.
 *
 * Only data lives here. What a worker holds for a session while serving it (open streams, requests
 * in flight, server→client requests awaiting an answer) is local and lives in protocol/live-sessions.ts.
 */
import { EdgeError } from '../wire/errors.ts'
import type { BusMessage } from './bus-message.ts'
import type { TaskTable } from './task-table.ts'
import type { CacheTable } from './cache-table.ts'
import type { ClientCapabilities, Implementation, LogLevel, ServerCapabilities } from '../wire/mcp-types.ts'

/** Everything a worker needs to serve any request of a session. Small: it is read on every request. */
export interface SessionRecord {
  readonly id: string
  /** The location of the route that created it; a session id is only valid on its own route. */
  readonly route: string
  readonly protocolVersion: string
  readonly clientInfo: Implementation | undefined
  readonly clientCapabilities: ClientCapabilities
  /** Who created the session (authentication fills it); another principal's request gets 404. */
  readonly principal: string | undefined
  readonly createdAt: number
  initialized: boolean
  /** Minimum level of `notifications/message`; undefined until the client sets one (then all pass). */
  logLevel: LogLevel | undefined
  /** Resource URIs the client subscribed to. */
  subscriptions: string[]
  /** Components disabled for this session only, as `kind:name` keys. */
  hidden: string[]
  /** A proxy route's upstream sessions, by upstream name: any worker continues them without a handshake. */
  upstreams?: Record<string, UpstreamSession>
  /**
   * The version of the session's own catalogue document (`ctx.session.register` and kin); absent
   * while it has none, so a session without per-session components costs no extra read.
   */
  catalogue?: number
}

/** What an upstream's initialize settled, kept so that another worker continues the session. */
export interface UpstreamSession {
  /** The upstream's `mcp-session-id`; absent for a transport without one (WebSocket, stdio). */
  readonly id?: string
  readonly protocolVersion: string
  readonly capabilities: ServerCapabilities
  readonly serverInfo: Implementation
}

/**
 * A change to a session record; the store applies it atomically and tells every worker. An addition
 * with `max` is not made when the list already holds `max` other items (the returned record says
 * whether it was).
 */
export type SessionChange =
  | { initialized: true }
  | { logLevel: LogLevel }
  | { subscribe: string; max?: number }
  | { unsubscribe: string }
  | { hide: string; max?: number }
  | { show: string }
  /** Keeps (or, with null, forgets) the session of one upstream. */
  | { upstream: string; session: UpstreamSession | null }
  /** Points the record at a newer version of the session's catalogue document (never back at an older one). */
  | { catalogue: number }

/** One SSE event kept for replay. */
export interface StoredEvent {
  readonly id: string
  readonly data: string
}

/** Documents a session keeps beside its record: its own catalogue and the handler's `ctx.session.state`. */
export type SessionDocName = 'catalogue' | 'state'

/** Whose document: a session's (it lives and expires with the session) or a route's (it outlives sessions). */
export type DocOwner = { readonly session: string; readonly name: SessionDocName } | { readonly route: string; readonly name: 'catalogue' }

/** A stored document: JSON text and the version compare-and-set checks (1 for the first write). */
export interface StoredDoc {
  readonly version: number
  readonly value: string
}

/** What a compare-and-set write did: the new version, or why it did not write. */
export type DocWrite = { readonly version: number } | 'conflict' | 'gone'

export type { BusMessage }

/** Messages between workers: what one publishes on a channel, every subscriber of it gets (itself included). */
export interface Bus {
  publish(channel: string, message: BusMessage): Promise<void>
  /** Returns a function that stops the subscription. */
  subscribe(channel: string, listener: (message: BusMessage) => void): () => void
}

export interface SessionStore {
  /** Adds a session that expires after `idleTtlMs` without a touch; rejects when the id exists. */
  create(record: SessionRecord, idleTtlMs: number): Promise<void>
  /** The session, or undefined when unknown or expired. The hot path's only store call. */
  get(id: string): Promise<SessionRecord | undefined>
  /**
   * The session when this process can tell without waiting (the memory store; a fresh cache entry of
   * a shared store), so the hot path stays synchronous. undefined means "ask `get`", not "unknown".
   */
  peek(id: string): SessionRecord | undefined
  /** Applies a change and returns the new record (undefined when the session is gone). */
  update(id: string, change: SessionChange): Promise<SessionRecord | undefined>
  /** Pushes the idle expiry back; backends coalesce these, so calling it per request is cheap. */
  touch(id: string): void
  /** Ends a session and drops its event log; false when it did not exist. */
  delete(id: string): Promise<boolean>
  /** Live sessions of a route (for max_sessions). */
  count(route: string): Promise<number>
  /** Ids of the route's live sessions (for list_changed and route-wide logs). */
  sessionIds(route: string): Promise<string[]>
  /** Appends an event to a stream's log and returns its id, unique within the session and naming the stream. */
  append(sessionId: string, stream: string, data: string): Promise<string>
  /** `append` without waiting, for a store that keeps the log in this process (memory): the SSE hot path makes no promise. */
  appendNow?(sessionId: string, stream: string, data: string): string
  /**
   * Events of the stream `afterId` belongs to that came after it, in order; undefined when `afterId` is
   * unknown: malformed, never issued, or naming a stream of which the log holds no event (invented, or
   * expired), so a client cannot follow a stream that does not exist.
   */
  replay(sessionId: string, afterId: string): Promise<{ stream: string; events: StoredEvent[] } | undefined>
  /** A document, or undefined when none was written (or its session is gone). */
  readDoc(owner: DocOwner): Promise<StoredDoc | undefined>
  /**
   * Writes `value` when the document's version is still `expected` (0: no document yet); atomic, so
   * a read-change-write loop over it is an atomic update. 'gone' when the owning session is.
   */
  writeDoc(owner: DocOwner, expected: number, value: string): Promise<DocWrite>
  readonly bus: Bus
  /** Task records (gateway/tasks/): versioned entries with a TTL, listed by owner. */
  readonly tasks: TaskTable
  /** Cached lists and tool results (gateway/store/cache-table.ts): bounded entries with a TTL. */
  readonly cache: CacheTable
  /** Reports whether the store can serve requests (for /readyz). */
  ready(): Promise<boolean>
  close(): Promise<void>
}

/**
 * The store cannot be reached (Redis down, the cluster primary gone, a command timed out). Backends
 * throw it for every such failure, so transports answer 503 with JSON-RPC -32000 and the client retries.
 */
export class StoreUnavailableError extends EdgeError {
  constructor(reason: string, options?: { cause?: unknown }) {
    super('MCP_EDGE_STORE_UNAVAILABLE', `Session store unavailable: ${reason}`)
    this.name = 'StoreUnavailableError'
    if (options?.cause !== undefined) this.cause = options.cause
  }
}

/** `store.event_bytes` and `store.event_bytes_total` when not configured (the config's defaults). */
export const DEFAULT_EVENT_BYTES = 8 * 1024 * 1024
export const DEFAULT_EVENT_BYTES_TOTAL = 256 * 1024 * 1024
/** `store.session_bytes_total` when not configured: sessions' own data in a memory store or cluster primary. */
export const DEFAULT_SESSION_BYTES_TOTAL = 256 * 1024 * 1024
/** `store.session_bytes_per_principal` when not configured: what one principal's sessions keep together. */
export const DEFAULT_SESSION_BYTES_PER_PRINCIPAL = 16 * 1024 * 1024

/** Event ids are `<stream>/<seq>`: the stream they belong to is readable from the id alone. */
export function eventId(stream: string, seq: number): string {
  return `${stream}/${seq}`
}

/** The stream and sequence number an event id names, or undefined for a malformed id. */
export function parseEventId(id: string): { stream: string; seq: number } | undefined {
  const slash = id.lastIndexOf('/')
  if (slash <= 0) return undefined
  const seq = Number(id.slice(slash + 1))
  if (!Number.isSafeInteger(seq) || seq < 0) return undefined
  return { stream: id.slice(0, slash), seq }
}
