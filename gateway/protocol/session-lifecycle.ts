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
  async initialize(request: JsonRpcRequest, principal?: string, reclaim?: () => Promise<boolean>): Promise<{ record: SessionRecord; response: JsonRpcResponse }> {
    const params = request.params ?? EMPTY_PARAMS
    if (typeof params.protocolVersion !== 'string') {
      throw new McpError(RpcCode.InvalidParams, 'initialize needs params.protocolVersion (a string)')
    }
    if (params.capabilities !== undefined && (typeof params.capabilities !== 'object' || params.capabilities === null)) {
      throw new McpError(RpcCode.InvalidParams, 'params.capabilities must be an object')
    }
    const route = this.#route
    checkInitializeSizes(params, route.limits)
    if ((await this.#store.count(route.location)) >= route.max_sessions && !(reclaim !== undefined && (await reclaim()))) {
      throw new EdgeError('MCP_EDGE_TOO_MANY_SESSIONS', `Too many sessions on ${route.location} (max_sessions ${route.max_sessions}); retry later`)
    }
    const protocolVersion = negotiateVersion(params.protocolVersion)
    const record: SessionRecord = {
      id: randomUUID(),
      route: route.location,
      protocolVersion,
      clientInfo: params.clientInfo as SessionRecord['clientInfo'],
      clientCapabilities: (params.capabilities ?? {}) as SessionRecord['clientCapabilities'],
      principal,
      createdAt: Date.now(),
      initialized: false,
      logLevel: undefined,
      subscriptions: [],
      hidden: [],
    }
    await this.#store.create(record, this.#idleTtlMs)
    return { record, response: resultMessage(request.id, { protocolVersion, ...this.#initializeResult }) }
  }

  /** Ends a session everywhere; false when it was unknown. */
  async delete(id: string): Promise<boolean> {
    const existed = await this.#store.delete(id)
    this.#notifier.ended(id)
    return existed
  }
}
