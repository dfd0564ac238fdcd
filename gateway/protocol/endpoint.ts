/**
 * One route's protocol engine: hands a session's requests to its request path (`session-requests.ts`:
 * phases, the method table, failures as JSON-RPC errors), and routes the client's notifications and
 * answers. Transport-agnostic: transports hand it parsed messages and a `RequestSink`. What a session
 * is made of lives beside it: its lifecycle (`session-lifecycle.ts`), what this worker holds for it
 * (`live-sessions.ts`), what a handler sees of it (`session-views.ts`), the route's events (`route-events.ts`).
 */
import { ResultCache } from '../registry/result-cache.ts'
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { RouteConfig } from '../config/types.ts'
import type { Caller } from '../wire/caller.ts'
import { ComponentScopes } from '../registry/component-scopes.ts'
import type { SessionView } from '../registry/context.ts'
import type { ListName, Registry } from '../registry/registry.ts'
import type { RouteEvent, RouteEventListener } from '../registry/route-server-api.ts'
import type { SessionRecord, SessionStore } from '../store/store.ts'
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../wire/jsonrpc.ts'
import { notification } from '../wire/jsonrpc.ts'
import type { JsonObject, LogLevel } from '../wire/mcp-types.ts'
import { discoverCapabilities, serverCapabilities, serverInfo } from './capabilities.ts'
import { Catalogues, type CatalogueHost } from './catalogues.ts'
import * as clientAnswers from './client-answers.ts'
import { LiveSessions } from './live-sessions.ts'
import { methodTable, type MethodHandler } from './methods/index.ts'
import { Notifier } from './notifier.ts'
import type { ContextHost } from './request-context.ts'
import { FairShare } from './fair-share.ts'
import { RouteEvents } from './route-events.ts'
import type { RootsCache } from './roots-cache.ts'
import { SessionLifecycle } from './session-lifecycle.ts'
import { SessionRequests } from './session-requests.ts'
import { SessionViews } from './session-views.ts'
import type { RequestSink, SessionOutlet } from './sink.ts'
import { StatelessDispatcher } from './stateless/dispatch.ts'
import type { Envelope } from './stateless/envelope.ts'
import type { RequestStateCodec } from './stateless/request-state.ts'
import type { TraceHeaders } from './tracing.ts'
import { TaskService } from '../tasks/task-service.ts'
import type { RouteCalls } from '../events/call-events.ts'
import type { FilterPhase } from '../phases/filter-phase.ts'
import type { RewritePhase } from '../phases/rewrite-phase.ts'

const EMPTY_PARAMS: JsonObject = Object.freeze({}) as JsonObject

/**
 * What a route serves beside its registry (a proxy route's upstreams): its methods laid over the
 * route's own, told when a session ends here and when the endpoint closes, reported by /readyz.
 */
export interface EndpointExtension {
  sessionEnded(record: SessionRecord | undefined, id: string): Promise<void>
  report(): Record<string, unknown>
  close(): void
  /** The route's label for a component an upstream listed (`kind` tool, prompt or resource); undefined when none did. */
  knows?(kind: 'tool' | 'prompt' | 'resource', name: string): string | undefined
  /** The gateway reloaded and this is the new generation's (a proxy route drops its cached lists). */
  reloaded?(): Promise<void>
}
/** Makes server→client request ids unique across workers: an answer may reach another worker of the session. */
const PROCESS_TAG = randomUUID().slice(0, 8)

export class McpEndpoint implements ContextHost, CatalogueHost {
  readonly route: RouteConfig
  /** The route's catalogue: what setup registered, then every run-time change, as every worker sees it. */
  readonly catalogues: Catalogues
  readonly store: SessionStore
  readonly logger: Logger
  readonly live = new LiveSessions()
  readonly notifier: Notifier
  readonly readTimeoutMs: number
  readonly logging: boolean
  readonly idleTtlMs: number
  readonly #methods: Map<string, MethodHandler>
  readonly #lifecycle: SessionLifecycle
  readonly #fairShare: FairShare
  readonly #views: SessionViews
  readonly #events: RouteEvents
  readonly #requests: SessionRequests
  #clientRequestSeq = 0
  /** False while the handler's setup runs: what it registers is the route's start, not a run-time change (see `setupDone`). */
  #running = false
  #extension: EndpointExtension | undefined

  /** Which components need which scopes (the route's `scopes`); undefined when none do. */
  readonly scopes: ComponentScopes | undefined

  /** The route's tasks (`tasks.enabled`); undefined when it has none. */
  readonly tasks: TaskService | undefined
  /** Cached results of the route's tools that declare `cache:` (handler tools, and a proxy route's upstream tools). */
  readonly results: ResultCache

  /** Serves this route's stateless (2026-07-28) requests, on any transport. */
  readonly stateless: StatelessDispatcher

  /** Where this route's calls are counted (events/call-events.ts); undefined: not counted. */
  calls: RouteCalls | undefined
  /** The route's filter phase (gateway/phases/); undefined when it declares none: sinks stay as they are. */
  filter: FilterPhase | undefined
  /**
   * Turns a request into the one it stands for before anything sees it (tool search's call_tool
   * becomes a direct tools/call: catalogue/search-mode.ts); undefined on most routes: nothing to pay.
   * It runs before the rewrite phase, which then sees the tool the client named.
   */
  translate: ((request: JsonRpcRequest) => JsonRpcRequest) | undefined
  /** The route's rewrite phase (gateway/phases/); undefined when it declares none: requests pass untouched. */
  rewrite: RewritePhase | undefined

  constructor(route: RouteConfig, registry: Registry, store: SessionStore, logger: Logger, codec: RequestStateCodec) {
    this.route = route
    this.store = store
    this.logger = logger
    this.notifier = new Notifier(route.location, route.resumability, store, this.live, logger, route.limits.roots_cache)
    this.readTimeoutMs = route.read_timeout * 1000
    this.idleTtlMs = route.longest_standby * 1000
    this.#fairShare = new FairShare(this.live, store, (id) => this.deleteSession(id), logger)
    this.logging = route.capabilities.logging
    const tasks = route.tasks.enabled && route.capabilities.tools !== false
    this.#methods = methodTable(route.capabilities, tasks)
    this.results = new ResultCache(store, route, logger)
    this.tasks = tasks ? new TaskService({ route, store, logger, notifySession: (id, message) => this.notifier.notifySession(id, message), answerChecks: clientAnswers }) : undefined
    this.scopes = ComponentScopes.from(route.scopes)
    const result: JsonObject = { capabilities: serverCapabilities(route), serverInfo: serverInfo(route) }
    if (route.server.instructions !== undefined) result.instructions = route.server.instructions
    this.#lifecycle = new SessionLifecycle(route, store, this.notifier, result)
    this.#views = new SessionViews(this)
    this.#events = new RouteEvents(logger)
    const capabilities = discoverCapabilities(route, result.capabilities as JsonObject)
    this.stateless = new StatelessDispatcher(this, codec, { capabilities, instructions: route.server.instructions })
    this.catalogues = new Catalogues(this, registry)
    this.#requests = new SessionRequests(this)
  }

  /** The route's catalogue now, as every session without one of its own sees it. */
  get registry(): Registry {
    return this.catalogues.route
  }

  /**
   * The handler's setup is over: from now on a change is a run-time change, kept in the store for
   * every worker and announced with list_changed. Every worker runs the same setup, so the lists it
   * builds are nobody's change; and at start the store may not be connected yet.
   */
  setupDone(): void {
    this.#running = true
    this.catalogues.start()
  }

  /** True once setup is over (run-time changes go through the store). */
  get running(): boolean {
    return this.#running
  }

  /** The catalogue `record`'s session sees (the route's, or its own). */
  viewOf(record: SessionRecord): Registry {
    return this.catalogues.viewOf(record)
  }

  catalogueReady(): Promise<void> | undefined {
    return this.catalogues.ready(undefined)
  }

  listChanged(list: ListName): void {
    this.#views.listChanged(list)
  }

  sessionListChanged(sessionId: string, list: ListName): void {
    this.#views.sessionListChanged(sessionId, list)
  }

  /**
   * Creates a session for an initialize request; throws McpError when params are invalid, EdgeError
   * when the route is full. At a full route, `reclaimable` names sessions of the heaviest client
   * (least recently used first) of which the first idle one ends to make room (docs/limits-and-errors.md).
   */
  initialize(request: JsonRpcRequest, principal?: string, reclaimable?: () => string[] | Promise<string[]>, reserved?: SessionRecord): Promise<{ record: SessionRecord; response: JsonRpcResponse }> {
    return this.#lifecycle.initialize(request, principal, reclaimable === undefined ? undefined : async () => this.#fairShare.reclaim(await reclaimable()), reserved)
  }

  /** A session whose initialize comes later (session-lifecycle.ts `reserve`; the 2024-11-05 HTTP+SSE transport). */
  reserveSession(principal: string | undefined, reclaimable?: () => string[] | Promise<string[]>): Promise<SessionRecord> {
    return this.#lifecycle.reserve(principal, reclaimable === undefined ? undefined : async () => this.#fairShare.reclaim(await reclaimable()))
  }

  /**
   * Serves one request of a session; the outcome reaches the client through `sink`. Never throws.
   * Synchronous when the method is (a tool returning a value): no promise, no in-flight entry, since
   * nothing can cancel a request that finishes before the event loop turns. A promise otherwise.
   * `headers` (the HTTP request's) may carry the trace's parent (`traceparent`) when tracing is on.
   */
  handleRequest(record: SessionRecord, request: JsonRpcRequest, sink: RequestSink, caller: Caller, headers?: TraceHeaders): Promise<void> | undefined {
    return this.#requests.handle(record, request, sink, caller, headers)
  }

  /** The handler of a method this route serves, if any (the stateless dispatcher shares them). */
  method(name: string): MethodHandler | undefined {
    return this.#methods.get(name)
  }

  /** Handles a client notification (cancelled, progress, initialized, roots/list_changed). */
  async handleNotification(record: SessionRecord, message: JsonRpcNotification): Promise<void> {
    const params = message.params ?? EMPTY_PARAMS
    switch (message.method) {
      case 'notifications/cancelled':
        if (typeof params.requestId === 'string' || typeof params.requestId === 'number') {
          this.notifier.cancel(record.id, params.requestId, typeof params.reason === 'string' ? params.reason : 'cancelled by the client')
        }
        return
      case 'notifications/progress':
        if (typeof params.progressToken === 'string' && typeof params.progress === 'number') {
          this.notifier.progress(record.id, params.progressToken, params.progress, params.total as number | undefined, params.message as string | undefined)
        }
        return
      case 'notifications/initialized':
        if (!record.initialized) await this.store.update(record.id, { initialized: true })
        this.emit('initialized', record, params)
        return
      case 'notifications/roots/list_changed':
        this.notifier.rootsChanged(record.id)
        this.emit('roots/list_changed', record, params)
        return
      default:
        this.logger.debug({ sessionId: record.id, method: message.method }, 'ignored client notification')
    }
  }

  /** Routes the client's answer to a server→client request. */
  handleResponse(record: SessionRecord, message: JsonRpcResponse): void {
    this.notifier.answer(record.id, message)
  }

  /** Serves `methods` over the route's own and tells `extension` what it needs to know. */
  extend(extension: EndpointExtension, methods: Record<string, MethodHandler>): void {
    this.#extension = extension
    for (const [name, handler] of Object.entries(methods)) this.#methods.set(name, handler)
  }

  /**
   * Lays `wrap` over the handler this route serves `name` with (the route's own or its extension's):
   * a gate such as approval (gateway/phases/approval-gate.ts). A route without one keeps its handler.
   */
  wrapMethod(name: string, wrap: (inner: MethodHandler) => MethodHandler): void {
    const inner = this.#methods.get(name)
    if (inner !== undefined) this.#methods.set(name, wrap(inner))
  }

  get extension(): EndpointExtension | undefined {
    return this.#extension
  }

  /** Ends a session everywhere; false when it was unknown. */
  async deleteSession(id: string): Promise<boolean> {
    const extension = this.#extension
    if (extension !== undefined) {
      const record = await this.store.get(id).catch(() => undefined)
      await extension.sessionEnded(record, id).catch((error: unknown) => this.logger.warn({ err: error, sessionId: id }, 'ending upstream sessions failed'))
    }
    return this.#lifecycle.delete(id)
  }

  /** Makes `outlet` the session's standalone stream on this worker; false when one is already open. */
  openOutlet(sessionId: string, outlet: SessionOutlet): boolean {
    return this.live.openOutlet(sessionId, outlet)
  }

  /** Forgets `outlet` if it is still the session's standalone stream. */
  closeOutlet(sessionId: string, outlet: SessionOutlet): void {
    this.live.closeOutlet(sessionId, outlet)
  }

  /** Sends resources/updated to `sessionIds` (default: every session of the route) subscribed to `uri`. */
  resourceUpdated(uri: string, sessionIds?: string[]): Promise<void> {
    return this.#views.resourceUpdated(uri, sessionIds)
  }

  /** Sends a log message to every session of the route whose level lets it through. */
  logToRoute(level: LogLevel, data: unknown, logger?: string): void {
    this.logToGateway(level, data, logger, undefined)
    if (!this.logging) return
    const params: JsonObject = { level, data }
    if (logger !== undefined) params.logger = logger
    this.notifier.notifyRoute(notification('notifications/message', params), level)
  }

  /** Adds a handler module's listener for a route event. */
  on(event: RouteEvent, listener: RouteEventListener): void {
    this.#events.on(event, listener)
  }

  /** Tells the route event's listeners, with the session as they see it. */
  emit(event: RouteEvent, record: SessionRecord, params: JsonObject): void {
    this.#events.emit(event, record.id, () => this.sessionView(record), params)
  }

  // ---- ContextHost ---------------------------------------------------------------------------

  logToGateway(level: LogLevel, data: unknown, logger: string | undefined, sessionId: string | undefined): void {
    const pinoLevel = level === 'debug' ? 'debug' : level === 'info' || level === 'notice' ? 'info' : level === 'warning' ? 'warn' : 'error'
    this.logger[pinoLevel]({ sessionId, logger, data, mcpLevel: level }, 'handler log')
  }

  get roots(): RootsCache {
    return this.notifier.roots
  }

  nextClientRequestId(): string {
    return `edge-${PROCESS_TAG}-${++this.#clientRequestSeq}`
  }

  sessionView(record: SessionRecord): SessionView {
    return this.#views.sessionView(record)
  }

  /** What a stateless request's handler sees as its session: the envelope, and no per-session state. */
  statelessSession(envelope: Envelope): SessionView {
    return this.#views.statelessSession(envelope)
  }

  close(): void {
    this.#fairShare.close()
    this.catalogues.close()
    this.#extension?.close()
    this.tasks?.close()
    this.notifier.listeners.endAll()
    this.notifier.close()
    for (const id of [...this.live.ids()]) this.live.end(id)
  }
}
