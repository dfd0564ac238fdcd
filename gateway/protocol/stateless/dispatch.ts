/**
 * Serves one stateless (2026-07-28) request: no session, the client's envelope in `params._meta`,
 * `resultType` on every result, caching hints on discover, lists and reads, and multi round-trip
 * requests in place of server→client requests. The same method handlers as sessions serve it, with a
 * request-scoped record built from the envelope.
 *
 *   request ─► method? ─► requestState verified ─► handler(ctx) ─► inputs recorded? ─► input_required
 *                                                                        │ no
 *                                                                        ▼
 *                                                           complete result (+ cache hints)
 */
import { hintsOf, stricter, type CacheHints } from '../../wire/cache-hints.ts'
import type { Logger } from 'pino'
import type { RouteConfig } from '../../config/types.ts'
import type { Registry } from '../../registry/registry.ts'
import { EdgeCode, EdgeError, McpError, RpcCode, refusalOf } from '../../wire/errors.ts'
import { quotaKey, type Caller } from '../../wire/caller.ts'
import { internalErrorText, reportFailure } from '../../registry/failure-report.ts'
import type { SessionRecord } from '../../store/store.ts'
import type { JsonRpcRequest } from '../../wire/jsonrpc.ts'
import { errorMessage, notification, resultMessage } from '../../wire/jsonrpc.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { MethodHandler, MethodHost } from '../methods/method-handler.ts'
import type { RequestSink } from '../sink.ts'
import { STATEFUL_VERSIONS } from '../../wire/versions.ts'
import { StatelessRequestContext, type StatelessHost } from './context.ts'
import { META_SERVER_INFO, STATELESS_VERSIONS, type Envelope } from './envelope.ts'
import { META_SUBSCRIPTION_ID, type ListenRegistry, type SubscriptionFilter } from './listen.ts'
import { paramsDigest, type RequestStateCodec } from './request-state.ts'
import { checkListenSubscriptions } from '../session-limits.ts'
import { traceDispatch, tracing, type TraceHeaders } from '../tracing.ts'
import type { FilterPhase } from '../../phases/filter-phase.ts'
import type { RewriteOutcome, RewritePhase } from '../../phases/rewrite-phase.ts'
import { CallRecord } from '../../events/call-record.ts'
import type { RouteCalls } from '../../events/call-events.ts'

/** Methods a stateless request may use beyond discover and listen; the rest are removed in 2026-07-28. */
const SHARED_METHODS: ReadonlySet<string> = new Set([
  'tools/list', 'tools/call', 'prompts/list', 'prompts/get', 'resources/list', 'resources/templates/list',
  'resources/read', 'completion/complete', 'tasks/get', 'tasks/update', 'tasks/cancel',
])
const CACHEABLE: ReadonlySet<string> = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read'])
const MAY_NEED_INPUT: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read'])
/** The wait a refused listen stream is told (Retry-After, and `data.retryAfterMs` on a channel without headers). */
const LISTEN_RETRY_MS = 5000

/** A sink that can also tell when the client went away and answer with an HTTP status (and headers, such as Retry-After). */
export interface StatelessSink extends RequestSink {
  respond(message: Parameters<RequestSink['respond']>[0], httpStatus?: number, headers?: Readonly<Record<string, string>>): void
  onClose(listener: () => void): void
}

/** The route's methods, by name. */
export interface MethodSource {
  method(name: string): MethodHandler | undefined
}

/** What the dispatcher needs of its route: its config, registry, methods, listen streams and log. */
export interface DispatchHost extends MethodHost, StatelessHost, MethodSource {
  readonly route: RouteConfig
  readonly registry: Registry
  readonly logger: Logger
  readonly notifier: { readonly listeners: ListenRegistry }
  /** Where the route's calls are counted; undefined: not counted. */
  readonly calls: RouteCalls | undefined
  /** The route's filter phase; undefined: results leave as the method made them. */
  readonly filter: FilterPhase | undefined
  /** The route's rewrite phase; undefined: requests and lists pass as they are. */
  readonly rewrite: RewritePhase | undefined
  /** undefined when the route's catalogue is current here; else a promise that reads it (once, after a run-time change). */
  catalogueReady(): Promise<void> | undefined
  /** Turns a request into the one it stands for (tool search's call_tool); undefined: as it came. */
  readonly translate?: ((request: JsonRpcRequest) => JsonRpcRequest) | undefined
}

/** True when a stateless request may call `method` at all; false means HTTP 404 with -32601. */
export function isStatelessMethod(methods: MethodSource, method: string): boolean {
  if (method === 'server/discover' || method === 'subscriptions/listen') return true
  return SHARED_METHODS.has(method) && methods.method(method) !== undefined
}

export class StatelessDispatcher {
  readonly #endpoint: DispatchHost
  readonly #codec: RequestStateCodec
  readonly #serverMeta: JsonObject
  readonly #discover: JsonObject

  constructor(endpoint: DispatchHost, codec: RequestStateCodec, discover: { capabilities: JsonObject; instructions?: string }) {
    this.#endpoint = endpoint
    this.#codec = codec
    const { route } = endpoint
    this.#serverMeta = { [META_SERVER_INFO]: { name: route.server.name, version: route.server.version } }
    this.#discover = {
      supportedVersions: [...STATELESS_VERSIONS, ...STATEFUL_VERSIONS],
      capabilities: discover.capabilities,
      ...(discover.instructions === undefined ? {} : { instructions: discover.instructions }),
    }
  }

  /**
   * Serves a request whose method passed `isStatelessMethod`; the outcome reaches the client through
   * `sink`. Synchronous when the method is (no promise on the hot path); a promise otherwise.
   * `headers` (the HTTP request's) may carry the trace's parent (`traceparent`) when tracing is on.
   */
  handle(request: JsonRpcRequest, envelope: Envelope, sink: StatelessSink, caller: Caller, headers?: TraceHeaders): Promise<void> | undefined {
    const translate = this.#endpoint.translate
    if (translate !== undefined) request = translate(request)
    const pending = this.#endpoint.catalogueReady()
    if (pending !== undefined) {
      return pending.then(
        () => this.handle(request, envelope, sink, caller, headers),
        () => {
          const row = EdgeCode.MCP_EDGE_STORE_UNAVAILABLE
          sink.respond(errorMessage(request.id, row.rpc, row.message), row.status)
        },
      )
    }
    const rewrite = this.#endpoint.rewrite
    if (rewrite === undefined || !rewrite.sees(request.method)) return this.#phases(request, envelope, sink, caller, headers)
    const outcome = rewrite.apply(request, caller.principal)
    if (outcome instanceof Promise) return outcome.then((settled) => this.#rewritten(settled, request, envelope, sink, caller, headers))
    return this.#rewritten(outcome, request, envelope, sink, caller, headers)
  }

  /** After the rewrite phase: its refusal (counted, decided by 'rewrite'), or the translated request on through the chain. */
  #rewritten(outcome: RewriteOutcome, request: JsonRpcRequest, envelope: Envelope, sink: StatelessSink, caller: Caller, headers: TraceHeaders | undefined): Promise<void> | undefined {
    if ('refusal' in outcome) {
      const calls = this.#endpoint.calls
      if (calls === undefined) return void sink.respond(outcome.refusal)
      const counted = new CallRecord(sink, calls, request, '', caller)
      counted.decision = 'rewrite'
      return void counted.respond(outcome.refusal)
    }
    return this.#phases(outcome.request, envelope, this.#endpoint.rewrite!.wrap(sink, outcome.request, outcome.rules), caller, headers)
  }

  /** Counted (call events), filtered (the filter phase), then dispatched. */
  #phases(request: JsonRpcRequest, envelope: Envelope, sink: StatelessSink, caller: Caller, headers: TraceHeaders | undefined): Promise<void> | undefined {
    const calls = this.#endpoint.calls
    const filter = this.#endpoint.filter
    if (tracing.on) {
      const facts = { sessionId: '', protocolVersion: envelope.protocolVersion, address: caller.address, headers }
      return traceDispatch(request, sink, facts, (traced, span) => {
        const counted = calls === undefined ? traced : (new CallRecord(traced, calls, request, '', caller, span) as unknown as StatelessSink)
        return this.#dispatch(request, envelope, filter === undefined ? counted : filter.wrap(counted, request, caller.principal), caller)
      })
    }
    const counted = calls === undefined ? sink : (new CallRecord(sink, calls, request, '', caller) as unknown as StatelessSink)
    return this.#dispatch(request, envelope, filter === undefined ? counted : filter.wrap(counted, request, caller.principal), caller)
  }

  #dispatch(request: JsonRpcRequest, envelope: Envelope, sink: StatelessSink, caller: Caller): Promise<void> | undefined {
    if (request.method === 'server/discover') {
      sink.respond(resultMessage(request.id, this.#complete({ ...this.#discover }, this.#endpoint.route.cache)))
      return undefined
    }
    if (request.method === 'subscriptions/listen') {
      this.#listen(request, sink, caller)
      return undefined
    }
    const params = request.params ?? {}
    let ctx: StatelessRequestContext
    try {
      ctx = this.#context(request, envelope, params, sink, caller)
    } catch (error) {
      // Only McpErrors say something the client may read; anything else is this gateway's fault.
      if (!(error instanceof McpError)) throw error
      sink.respond(errorMessage(request.id, error.code, error.message, error.data), refusalOf(error).status)
      return undefined
    }
    let outcome: JsonObject | Promise<JsonObject>
    try {
      outcome = this.#endpoint.method(request.method)!(this.#endpoint, this.#record(envelope, caller), params, ctx)
    } catch (error) {
      this.#finish(request, params, ctx, undefined, error ?? new Error('thrown without a reason'), sink)
      return undefined
    }
    if (!(outcome instanceof Promise)) {
      this.#finish(request, params, ctx, outcome, undefined, sink)
      return undefined
    }
    // Only a request still running can see its client go away.
    sink.onClose(() => ctx.cancel('the client closed the response stream'))
    return outcome.then(
      (result) => this.#finish(request, params, ctx, result, undefined, sink),
      (error: unknown) => this.#finish(request, params, ctx, undefined, error ?? new Error('rejected without a reason'), sink),
    )
  }

  /** Answers a round: nothing when cancelled, input-required when the handler asked, else the result or the error. */
  #finish(request: JsonRpcRequest, params: JsonObject, ctx: StatelessRequestContext, result: JsonObject | undefined, failure: unknown, sink: StatelessSink): void {
    if (ctx.cancelled) return sink.abandon()
    if (result?.resultType === 'input_required' && MAY_NEED_INPUT.has(request.method)) {
      // A handler's own round (a proxied upstream's): what it kept with setRequestState travels
      // signed by this gateway, so the retry verifies here like any other.
      const own = result._meta as JsonObject | undefined
      const requestState = this.#codec.sign(request.method, paramsDigest(params), ctx.caller.principal, { answers: {}, handlerState: ctx.nextRequestState, approval: ctx.approval })
      sink.respond(resultMessage(request.id, { ...result, requestState, _meta: own === undefined ? this.#serverMeta : { ...own, ...this.#serverMeta } }))
    } else if (ctx.inputRequests.size > 0 && MAY_NEED_INPUT.has(request.method)) {
      sink.respond(resultMessage(request.id, this.#inputRequired(request.method, params, ctx, ctx.caller.principal)))
    } else if (failure !== undefined) {
      this.#fail(request, failure, sink)
    } else {
      // List pages are cached and frozen: those results are copied; a call's result is its own.
      const cacheable = CACHEABLE.has(request.method)
      const own = request.method === 'resources/read' ? this.#readHints(params.uri) : this.#endpoint.route.cache
      // What made the result (a proxy route's upstreams, the list cache) may allow less than the route: the stricter wins.
      const hints = cacheable ? stricterHints(own, hintsOf(result!)) : undefined
      sink.respond(resultMessage(request.id, this.#complete(cacheable ? { ...result } : result!, hints)))
    }
  }

  /** The context of one round: answers from the client's inputResponses plus those kept in the state. */
  #context(request: JsonRpcRequest, envelope: Envelope, params: JsonObject, sink: StatelessSink, caller: Caller): StatelessRequestContext {
    const responses = params.inputResponses
    if (responses === null || (responses !== undefined && (typeof responses !== 'object' || Array.isArray(responses)))) {
      throw new McpError(RpcCode.InvalidParams, 'inputResponses must be an object keyed by input request')
    }
    let answers = (responses ?? {}) as JsonObject
    let previousState: unknown
    let approval: JsonObject | undefined
    if (params.requestState !== undefined) {
      // Bound to the principal: another caller cannot replay (or finish) someone else's rounds.
      const state = this.#codec.verify(params.requestState, request.method, paramsDigest(params), caller.principal)
      answers = { ...state.answers, ...answers }
      previousState = state.handlerState
      approval = state.approval
    }
    const ctx = new StatelessRequestContext(this.#endpoint, envelope, request.id, params._meta as JsonObject | undefined, sink, answers, previousState, caller)
    if (approval !== undefined) ctx.approval = approval
    return ctx
  }

  #inputRequired(method: string, params: JsonObject, ctx: StatelessRequestContext, principal: string | undefined): JsonObject {
    const inputRequests: JsonObject = {}
    for (const [key, input] of ctx.inputRequests) inputRequests[key] = input
    // The answers gathered so far ride along in the state, so each round only asks for what is missing.
    const answers: JsonObject = {}
    for (const [key, value] of Object.entries(ctx.answers)) if (!ctx.inputRequests.has(key)) answers[key] = value
    const requestState = this.#codec.sign(method, paramsDigest(params), principal, { answers, handlerState: ctx.nextRequestState, approval: ctx.approval })
    return { resultType: 'input_required', inputRequests, requestState, _meta: this.#serverMeta }
  }

  /** Makes `result` a complete 2026-07-28 result (for answers made outside a handler, such as a rate limit's). */
  complete(result: JsonObject): JsonObject {
    return this.#complete(result, undefined)
  }

  #complete(result: JsonObject, hints: { ttl_ms: number; scope: string } | undefined): JsonObject {
    // A CreateTaskResult keeps its own (the tasks extension's `task`).
    if (result.resultType !== 'task') result.resultType = 'complete'
    if (hints !== undefined) {
      result.ttlMs = hints.ttl_ms
      result.cacheScope = hints.scope
    }
    const own = result._meta as JsonObject | undefined
    result._meta = own === undefined ? this.#serverMeta : { ...own, ...this.#serverMeta }
    return result
  }

  #readHints(uri: unknown): { ttl_ms: number; scope: string } {
    const route = this.#endpoint.route.cache
    if (typeof uri !== 'string') return route
    const resolved = this.#endpoint.registry.resolveResource(uri)
    const own = resolved === undefined ? undefined : resolved.kind === 'resource' ? resolved.entry.resource.cache : resolved.entry.template.cache
    return { ttl_ms: own?.ttlMs ?? route.ttl_ms, scope: own?.scope ?? route.scope }
  }

  #fail(request: JsonRpcRequest, error: unknown, sink: StatelessSink): void {
    // A store outage is a 503 here too, as on a session (session-requests.ts), not an internal error.
    if (error instanceof EdgeError && error.code === 'MCP_EDGE_STORE_UNAVAILABLE') {
      this.#endpoint.logger.warn({ err: error, method: request.method }, 'session store unavailable')
      sink.respond(errorMessage(request.id, error.rpcCode, EdgeCode.MCP_EDGE_STORE_UNAVAILABLE.message), error.status)
      return
    }
    if (!(error instanceof McpError)) {
      const ref = reportFailure(this.#endpoint.logger, error, { method: request.method, requestId: request.id })
      sink.respond(errorMessage(request.id, RpcCode.InternalError, internalErrorText(ref)))
      return
    }
    // 2026-07-28 reports an unknown resource as invalid params (SEP-2164).
    const code = error.code === RpcCode.ResourceNotFound ? RpcCode.InvalidParams : error.code
    sink.respond(errorMessage(request.id, code, error.message, error.data), code === RpcCode.MissingCapability ? EdgeCode.MCP_EDGE_MISSING_CAPABILITY.status : undefined)
  }

  /**
   * Opens a listen stream: the acknowledgement first, then the notifications it asked for. Each holds
   * a connection, its filter and its id for as long as it stays open, so a client (principal, else
   * address) holds at most `limits.listen_streams_per_client` on this worker, and the route at most
   * `limits.listen_streams`.
   */
  #listen(request: JsonRpcRequest, sink: StatelessSink, caller: Caller): void {
    const limits = this.#endpoint.route.limits
    const listeners = this.#endpoint.notifier.listeners
    const client = quotaKey(caller)
    const refusal = listeners.held(client) >= limits.listen_streams_per_client
      ? new EdgeError('MCP_EDGE_TOO_MANY_LISTEN_STREAMS', `Too Many Requests: this client already holds ${limits.listen_streams_per_client} subscriptions/listen streams (limits.listen_streams_per_client); close one first`)
      : listeners.size >= limits.listen_streams
        ? new EdgeError('MCP_EDGE_LISTEN_STREAMS_FULL', `Service Unavailable: this route holds ${limits.listen_streams} subscriptions/listen streams (limits.listen_streams); retry later`)
        : undefined
    if (refusal !== undefined) {
      sink.respond(errorMessage(request.id, refusal.rpcCode, refusal.message, { retryAfterMs: LISTEN_RETRY_MS }), refusal.status, refusal.headers)
      return
    }
    const asked = (request.params?.notifications ?? {}) as SubscriptionFilter
    const caps = this.#endpoint.route.capabilities
    const honoured: SubscriptionFilter = {}
    if (asked.toolsListChanged === true && caps.tools !== false && caps.tools.list_changed) honoured.toolsListChanged = true
    if (asked.promptsListChanged === true && caps.prompts !== false && caps.prompts.list_changed) honoured.promptsListChanged = true
    if (asked.resourcesListChanged === true && caps.resources !== false && caps.resources.list_changed) honoured.resourcesListChanged = true
    if (Array.isArray(asked.resourceSubscriptions) && caps.resources !== false && caps.resources.subscribe) {
      const uris = asked.resourceSubscriptions.filter((uri): uri is string => typeof uri === 'string')
      try {
        checkListenSubscriptions(uris, this.#endpoint.route.limits)
      } catch (error) {
        const rpc = error as McpError
        sink.respond(errorMessage(request.id, rpc.code, rpc.message), refusalOf(rpc).status)
        return
      }
      honoured.resourceSubscriptions = uris
    }
    const subscriptionId = request.id
    const meta = { [META_SUBSCRIPTION_ID]: subscriptionId }
    sink.send(notification('notifications/subscriptions/acknowledged', { notifications: honoured as JsonObject, _meta: meta }))
    const remove = listeners.add({
      subscriptionId,
      filter: honoured,
      send: (message) => sink.send(message),
      end: () => sink.respond(resultMessage(subscriptionId, { resultType: 'complete', _meta: meta })),
    }, client)
    sink.onClose(remove)
  }

  /** The request-scoped stand-in for a session record: what the method handlers read from one. */
  #record(envelope: Envelope, caller: Caller): SessionRecord {
    return {
      id: '',
      route: this.#endpoint.route.location,
      protocolVersion: envelope.protocolVersion,
      clientInfo: envelope.clientInfo,
      clientCapabilities: envelope.clientCapabilities,
      principal: caller.principal,
      createdAt: 0,
      initialized: true,
      logLevel: envelope.logLevel,
      subscriptions: [],
      hidden: [],
    }
  }
}

/** The route's hints narrowed by the result's own (the shorter TTL; private when either is). */
function stricterHints(route: { ttl_ms: number; scope: string }, made: CacheHints): { ttl_ms: number; scope: string } {
  if (made.ttlMs === undefined && made.scope === undefined) return route
  const narrowed = stricter({ ttlMs: route.ttl_ms, scope: route.scope === 'public' ? 'public' : 'private' }, made)
  return { ttl_ms: narrowed.ttlMs, scope: narrowed.scope }
}
