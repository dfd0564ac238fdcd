/**
 * A session's beginning and end: initialize checks its params and the route's session bound,
 * negotiates the version and creates the record; delete ends the session in the store and on every
 * worker.
 */
import { randomUUID } from 'node:crypto'
import type { RouteConfig } from '../config/types.ts'
import type { SessionRecord, SessionStore } from '../store/store.ts'
import { EdgeError, McpError, RpcCode } from '../wire/errors.ts'
import { resultMessage, type JsonRpcRequest, type JsonRpcResponse } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { negotiateVersion } from '../wire/versions.ts'
import type { Notifier } from './notifier.ts'
import { checkInitializeSizes } from './session-limits.ts'

const EMPTY_PARAMS: JsonObject = Object.freeze({}) as JsonObject

/** The protocol version of a reserved session (`reserve`): no client has initialized it yet. */
export const RESERVED = ''

export class SessionLifecycle {
  readonly #route: RouteConfig
  readonly #store: SessionStore
  readonly #notifier: Notifier
  readonly #idleTtlMs: number
  /** Everything of the initialize result but the negotiated version: the same for every session. */
  readonly #initializeResult: JsonObject

  constructor(route: RouteConfig, store: SessionStore, notifier: Notifier, initializeResult: JsonObject) {
    this.#route = route
    this.#store = store
    this.#notifier = notifier
    this.#idleTtlMs = route.longest_standby * 1000
    this.#initializeResult = initializeResult
  }

  /**
   * Creates a session for an initialize request; throws McpError when params are invalid, EdgeError
   * when the route is full and `reclaim` (the fair share: it ends another client's idle session) frees no place.
   */
  async initialize(request: JsonRpcRequest, principal?: string, reclaim?: () => Promise<boolean>, reserved?: SessionRecord): Promise<{ record: SessionRecord; response: JsonRpcResponse }> {
    const params = request.params ?? EMPTY_PARAMS
    if (typeof params.protocolVersion !== 'string') {
      throw new McpError(RpcCode.InvalidParams, 'initialize needs params.protocolVersion (a string)')
    }
    if (params.capabilities !== undefined && (typeof params.capabilities !== 'object' || params.capabilities === null)) {
      throw new McpError(RpcCode.InvalidParams, 'params.capabilities must be an object')
    }
    const route = this.#route
    checkInitializeSizes(params, route.limits)
    // A reserved session already holds its place under max_sessions.
    if (reserved === undefined) await this.#admit(reclaim)
    const protocolVersion = negotiateVersion(params.protocolVersion)
    const record = freshRecord(reserved?.id ?? randomUUID(), route.location, principal, {
      protocolVersion,
      clientInfo: params.clientInfo as SessionRecord['clientInfo'],
      clientCapabilities: (params.capabilities ?? {}) as SessionRecord['clientCapabilities'],
    })
    // The reservation becomes the session: the store has no change that rewrites a record's client
    // facts, so the record is replaced under the same id. Two initializes of one stream racing each
    // other both pass (the later wins); both come from the stream's own principal.
    if (reserved !== undefined && !(await this.#store.delete(reserved.id))) throw new EdgeError('MCP_EDGE_SESSION_NOT_FOUND')
    await this.#store.create(record, this.#idleTtlMs)
    return { record, response: resultMessage(request.id, { protocolVersion, ...this.#initializeResult }) }
  }

  /**
   * Holds a place under max_sessions for a session whose initialize comes later on another
   * connection (the 2024-11-05 HTTP+SSE transport: the stream names the session before the client
   * says who it is). The record's `protocolVersion` is RESERVED until `initialize(…, reserved)`.
   */
  async reserve(principal: string | undefined, reclaim?: () => Promise<boolean>): Promise<SessionRecord> {
    await this.#admit(reclaim)
    const record = freshRecord(randomUUID(), this.#route.location, principal, { protocolVersion: RESERVED, clientInfo: undefined, clientCapabilities: {} })
    await this.#store.create(record, this.#idleTtlMs)
    return record
  }

  /** Refuses a new session when the route holds max_sessions and `reclaim` frees no place. */
  async #admit(reclaim: (() => Promise<boolean>) | undefined): Promise<void> {
    const route = this.#route
    if ((await this.#store.count(route.location)) >= route.max_sessions && !(reclaim !== undefined && (await reclaim()))) {
      throw new EdgeError('MCP_EDGE_TOO_MANY_SESSIONS', `Too many sessions on ${route.location} (max_sessions ${route.max_sessions}); retry later`)
    }
  }

  /** Ends a session everywhere; false when it was unknown. */
  async delete(id: string): Promise<boolean> {
    const existed = await this.#store.delete(id)
    this.#notifier.ended(id)
    return existed
  }
}

/** A session record as it starts: not yet initialized, no log level, nothing subscribed or hidden. */
function freshRecord(
  id: string,
  route: string,
  principal: string | undefined,
  client: Pick<SessionRecord, 'protocolVersion' | 'clientInfo' | 'clientCapabilities'>,
): SessionRecord {
  return { id, route, ...client, principal, createdAt: Date.now(), initialized: false, logLevel: undefined, subscriptions: [], hidden: [] }
}
