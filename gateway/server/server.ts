/**
 * Builds the gateway from a validated config: one Fastify app, one endpoint per route (its registry
 * filled by the route's handler module), the health endpoints, and the error mapping that gives every
 * refusal a JSON-RPC body.
 *
 *   config ─► store ─► per route: Registry ◄─ handler.setup(mcp, server)
 *                                  │
 *                                  ▼
 *                              McpEndpoint ◄─ transport/streamable-http (POST · GET · DELETE)
 *                                             ◄─ transport/websocket (GET with Upgrade, same path)
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions } from 'node:http'
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Logger } from 'pino'
import type { GatewayConfig, RouteConfig } from '../config/types.ts'
import { EdgeCode, EdgeError, McpError, refusalOf } from '../wire/errors.ts'
import type { Handler } from '../registry/define-handler.ts'
import type { FrontServer } from './front-server.ts'
import { loadHandler } from './load-handler.ts'
import { createLogger, flushLogger } from '../log/logger.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { buildEndpoint, setupFailure, virtualRoutes } from './route-endpoint.ts'
import { CredentialContext } from '../upstream/credentials/context.ts'
import { signerOf } from '../upstream/credentials/identity-assertion.ts'
import { registerOAuthCallback } from './oauth-callback.ts'
import { loadPhases, type PhaseModules } from '../phases/load-phases.ts'
import { subscribeLogPhase } from '../phases/log-phase.ts'
import { AuditSink } from '../phases/audit-sink.ts'
import { idOf } from '../wire/jsonrpc.ts'
import { codecFromConfig } from '../protocol/stateless/request-state.ts'
import { createLimiter } from '../store/create-limiter.ts'
import { createStore } from '../store/create-store.ts'
import type { Limiter } from '../store/limiter.ts'
import { RouteLimits } from '../edge/limits.ts'
import { StoreUnavailableError, type SessionStore } from '../store/store.ts'
import { capConnections, clientErrorHandler, serverTimeouts } from '../edge/connection-guard.ts'
import { createMetrics } from '../edge/metrics.ts'
import { openStreamCount } from '../transport/sse.ts'
import { parseMessageText, UnparsedMessageError } from '../transport/json-text.ts'
import { replyError } from '../transport/reply-error.ts'
import { failureRefusal } from '../transport/failure-refusal.ts'
import { HotPost, HotPosts, replayedBody } from '../transport/hot-post.ts'
import { registerStreamableHttp } from '../transport/streamable-http.ts'
import { registerLegacySse } from '../transport/legacy-sse.ts'
import { registerWebSocket, registerWebSocketSupport } from '../transport/websocket.ts'
import { buildMetricsApp, registerMetricsRoute } from '../edge/metrics-endpoint.ts'
import { decorateCaller, registerAccess, registerProtectedResourceMetadata } from '../edge/access-hook.ts'
import { RouteAccess } from '../edge/route-access.ts'
import { HotAccess } from '../edge/hot-access.ts'
import { CallEvents } from '../events/call-events.ts'
import { routeComponents } from '../events/route-components.ts'
import { refusedUnread } from '../events/refused-call.ts'
import type { ProxyRoute, UpstreamStatus } from '../upstream/proxy-route.ts'

/** Each proxy route's upstreams as this process sees them. */
function upstreamStatuses(endpoints: ReadonlyMap<string, McpEndpoint>): Map<string, UpstreamStatus[]> {
  const statuses = new Map<string, UpstreamStatus[]>()
  for (const [location, endpoint] of endpoints) {
    const extension = endpoint.extension as Partial<ProxyRoute> | undefined
    if (typeof extension?.upstreamStatus === 'function') statuses.set(location, extension.upstreamStatus())
  }
  return statuses
}

export interface Gateway {
  readonly app: FastifyInstance
  /** Where the gateway logs (Fastify itself is given none). */
  readonly logger: Logger
  readonly store: SessionStore
  readonly endpoints: ReadonlyMap<string, McpEndpoint>
  /** Every call this generation served (events/call-events.ts): what the metrics and the admin API read. */
  readonly events: CallEvents
  /** Each proxy route's upstreams as this process sees them, by route. */
  upstreams(): Map<string, UpstreamStatus[]>
  /** The config this generation serves, and its number (0 at start, +1 per reload). */
  readonly config: GatewayConfig
  readonly generation: number
  /** The metrics listener when `metrics.listen` gives it its own address (started by `startGateway`). */
  readonly metricsApp: FastifyInstance | undefined
  /** The hot path of its Streamable HTTP routes (`served`: requests it answered without Fastify). */
  readonly hotPosts: HotPosts
  /** Stops accepting, ends sessions held here and closes the store. */
  close(): Promise<void>
}

export interface GatewayOptions {
  /** A logger to use instead of one built from `config.log`. */
  logger?: Logger
  /** A store to share instead of one built from `config.store` (tests run several gateways on one store). */
  store?: SessionStore
  /** A limiter to share with `store` (made beside the store when absent and some route has limits). */
  limiter?: Limiter
  /**
   * A listening socket owned apart from the app (a single process that reloads by swapping apps):
   * the app serves through it once activated, and its connection bounds live there.
   */
  front?: FrontServer
  /** Loads the handler modules afresh, as the n-th generation (a reload); 0 the first time. */
  generation?: number
}

/**
 * Fastify's serverFactory for a gateway that listens itself: the HTTP/1.1 server Fastify would make
 * (its timeouts as Fastify sets them), its requests through the hot path first.
 */
function ownServer(hot: HotPosts) {
  return (handler: RequestListener, options: FastifyServerOptions): Server => {
    const server = createServer((options as { http?: ServerOptions }).http ?? {}, hot.listener(handler))
    server.keepAliveTimeout = options.keepAliveTimeout ?? 72_000
    server.requestTimeout = options.requestTimeout ?? 0
    server.setTimeout(options.connectionTimeout ?? 0)
    return server
  }
}

/** How long the rest of a refused body is read (and dropped) before its connection is cut. */
const LINGER_MS = 5000

/**
 * A body refused for its size is still on its way: closing the connection at once (Fastify asks for
 * `Connection: close`) resets it with the body unread, and a proxy still sending it (nginx with
 * `proxy_request_buffering off`) loses the 413 to the reset and answers 502. So the connection stays:
 * Node reads and drops the rest of the body after the answer, as nginx's lingering close does, and
 * the connection serves on; a body still arriving after LINGER_MS is cut.
 */
function lingerOnRefusedBody(request: IncomingMessage): void {
  if (request.complete) return
  // Fastify stopped reading a body that went over the limit on its way: what is left flows, dropped.
  request.resume()
  const timer = setTimeout(() => {
    if (!request.complete) request.socket.destroy()
  }, LINGER_MS)
  timer.unref()
  request.once('end', () => clearTimeout(timer))
  request.once('close', () => clearTimeout(timer))
}

/** Loads every route's handler module; returns the handlers, or every problem found. */
export async function loadHandlers(routes: readonly RouteConfig[], generation = 0): Promise<{ handlers: Map<string, Handler>; phases: Map<string, PhaseModules>; problems: string[] }> {
  const handlers = new Map<string, Handler>()
  const phases = new Map<string, PhaseModules>()
  const problems: string[] = []
  for (const route of routes) {
    try {
      handlers.set(route.location, await loadHandler(route.handler, generation))
    } catch (error) {
      problems.push(`route ${route.location}: ${(error as Error).message}`)
    }
    try {
      phases.set(route.location, await loadPhases(route, generation))
    } catch (error) {
      problems.push(`route ${route.location}: ${(error as Error).message}`)
    }
  }
  return { handlers, phases, problems }
}

/** Builds (but does not start) the gateway. Throws when a handler module is missing or fails its setup. */
export async function buildGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.log)
  const { handlers, phases, problems } = await loadHandlers(config.routes, options.generation)
  if (problems.length > 0) throw new Error(problems.join('\n'))
  // The audit record (off by default): opened before anything that would need closing if it cannot be;
  // a subscriber of the call events once they exist.
  const audit = config.audit === undefined ? undefined : new AuditSink(config.audit, config.log, config.routes)
  const store = options.store ?? createStore(config.store, { logger })
  if (config.store.type !== 'memory' && config.request_state.key === undefined && !process.env.MCP_EDGE_REQUEST_STATE_KEY) {
    logger.warn({ store: config.store.type }, 'request_state.key is not set (nor MCP_EDGE_REQUEST_STATE_KEY): each process signs requestState with its own random key, so a stateless round that reaches another worker or host is refused as invalid params; give every worker the same key')
  }
  const limited = config.routes.some((route) => route.quotas.rate.length > 0 || route.quotas.sessions_per_principal > 0 || route.quotas.concurrent_requests_per_session > 0)
  const limiter = options.limiter ?? (limited ? createLimiter(config.store, { store }) : undefined)

  // The hot path of Streamable HTTP (transport/hot-post.ts), in front of Fastify's request listener.
  const hot = new HotPosts()
  const app = Fastify({
    // Fastify gets no logger of its own: with one it makes (or, with a factory, validates) a child
    // logger per request, a measurable share of a tools/call. The gateway writes its lines, one per MCP
    // request included, through its own pino (`Gateway.logger`).
    logger: false,
    bodyLimit: config.body_limit,
    // Who the client is (request.ip, the key of address-keyed limits): behind a load balancer, the
    // address it names in X-Forwarded-For, when the config trusts it.
    trustProxy: config.trust_proxy,
    return503OnClosing: true,
    // SSE streams are ended by the endpoints before the app closes; what is left is cut, not awaited.
    forceCloseConnections: true,
    // Slow clients (headers or a body that never arrive) are cut by the server's own sweep; with a
    // front server, that server is the one listening and holds these bounds itself.
    ...(options.front !== undefined
      ? { serverFactory: (handler: RequestListener) => options.front!.factory(hot.listener(handler)) }
      : { ...serverTimeouts(config.connections), clientErrorHandler: clientErrorHandler(logger), serverFactory: ownServer(hot) }),
  })
  // A body the hot path read before handing its request back is read by Fastify from here.
  app.addHook('preParsing', (request, _reply, payload, done) => done(null, replayedBody(request.raw) ?? payload))
  app.addHook('preClose', (done) => {
    hot.close()
    done()
  })
  if (options.front === undefined) capConnections(app.server, config.connections, logger)
  app.removeAllContentTypeParsers()
  const jsonBounds = config.limits
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // The Python SDK sends its JSON Content-Type on every request, a body-less DELETE too: no body, nothing to parse.
    if (body === '' && request.method === 'DELETE') return done(null, undefined)
    try {
      done(null, parseMessageText(body as string, jsonBounds))
    } catch (error) {
      done(error as UnparsedMessageError, undefined)
    }
  })
  app.setErrorHandler((error: FastifyError | McpError, request, reply) => {
    if (error instanceof UnparsedMessageError) return replyError(reply, refusalOf(error), error.id)
    if (error instanceof McpError) return replyError(reply, refusalOf(error))
    if (error instanceof StoreUnavailableError) return replyError(reply, failureRefusal(error, logger, { reqId: request.id }), idOf(request.body))
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE': {
        // Fastify asks for `Connection: close` here; the connection stays (lingerOnRefusedBody says why).
        reply.removeHeader('connection')
        lingerOnRefusedBody(request.raw)
        const refused = new EdgeError('MCP_EDGE_BODY_TOO_LARGE', `Payload Too Large: the body is over ${config.body_limit} bytes`)
        refusedUnread(endpoints.get(request.routeOptions.url ?? '')?.calls, request.headers, 'body_limit', refused.message)
        return replyError(reply, refused)
      }
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
        const refused = new EdgeError('MCP_EDGE_UNSUPPORTED_MEDIA_TYPE')
        refusedUnread(endpoints.get(request.routeOptions.url ?? '')?.calls, request.headers, 'media_type', refused.message)
        return replyError(reply, refused)
      }
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return replyError(reply, new EdgeError('MCP_EDGE_PARSE_ERROR', 'Parse error: empty body'))
    }
    // Fastify's other refusals (a malformed request line, …) keep Fastify's status.
    const status = error.statusCode ?? EdgeCode.MCP_EDGE_INTERNAL.status
    if (status < EdgeCode.MCP_EDGE_INTERNAL.status) return replyError(reply, new EdgeError('MCP_EDGE_INVALID_REQUEST', error.message, { status }))
    return replyError(reply, failureRefusal(error, logger, { reqId: request.id, url: request.url }), idOf(request.body))
  })
  app.setNotFoundHandler((request, reply) =>
    replyError(reply, new EdgeError('MCP_EDGE_ROUTE_NOT_FOUND', `Not Found: no MCP route at ${request.url}`)),
  )

  // Before any route: @fastify/websocket must see every route added after it.
  const websockets = await registerWebSocketSupport(app, config.routes, logger)
  const codec = codecFromConfig(config.request_state)
  const events = new CallEvents(options.generation ?? 0)
  audit?.attach(events)
  const endpoints = new Map<string, McpEndpoint>()
  const upstreams = (): Map<string, UpstreamStatus[]> => upstreamStatuses(endpoints)
  const metrics = config.metrics.enabled
    ? createMetrics({ routes: config.routes.map((route) => route.location), store, openStreams: openStreamCount, calls: { events: () => events, upstreams } })
    : undefined
  const metricsApp = metrics !== undefined && config.metrics.listen !== undefined ? buildMetricsApp(config.metrics, metrics) : undefined
  if (metrics !== undefined && metricsApp === undefined) registerMetricsRoute(app, config.metrics, metrics)
  decorateCaller(app)
  // Upstream credentials (tokens, their cache and locks) beside the sessions: Redis when they are there.
  const credentials = new CredentialContext(logger, config, store)
  const protectedRoutes = new Map<string, RouteAccess>()
  for (const route of config.routes) {
    let endpoint: McpEndpoint
    let access: RouteAccess | undefined
    try {
      access = await RouteAccess.build(route, logger)
      endpoint = await buildEndpoint(route, handlers.get(route.location)!, store, logger, codec, undefined, credentials, phases.get(route.location))
    } catch (error) {
      await credentials.close().catch(() => undefined)
      if (error instanceof EdgeError && error.code === 'MCP_EDGE_CONFIG_INVALID') {
        for (const built of endpoints.values()) built.close()
        await app.close()
        await audit?.close()
        if (options.store === undefined) await store.close().catch(() => undefined)
        throw error
      }
      // Release what was built so far (a Redis store holds a socket that would keep the process alive).
      for (const built of endpoints.values()) built.close()
      await app.close()
      await audit?.close()
      if (options.store === undefined) await store.close().catch(() => undefined)
      if (options.limiter === undefined) await limiter?.close().catch(() => undefined)
      const reason = error instanceof Error ? error.message : String(error)
      throw Object.assign(
        new EdgeError('MCP_EDGE_HANDLER_INVALID', setupFailure(route, reason)),
        { cause: error },
      )
    }
    endpoints.set(route.location, endpoint)
    endpoint.calls = events.route(route.location)
    endpoint.calls.source = routeComponents(endpoint)
    const logPhase = phases.get(route.location)?.log
    if (logPhase !== undefined) subscribeLogPhase(events, route.location, logPhase, endpoint.logger)
    if (access !== undefined) protectedRoutes.set(route.location, access)
    // Each route in its own scope, so its Origin/Host hook guards only its own paths.
    await app.register(async (scope) => {
      const limits = RouteLimits.of(route.location, route.quotas, limiter)
      if (route.transports.includes('streamable_http')) {
        const { http, policy } = registerStreamableHttp(scope, endpoint, metrics?.route(route.location), limits)
        // Not for a client whose address comes from a forwarded header: the hot path knows only the peer's.
        if (!config.trust_proxy) {
          const hotAccess = access === undefined ? undefined : new HotAccess(endpoint, access)
          hot.add(route.location, new HotPost(hot, http, { policy, access: hotAccess, bodyLimit: config.body_limit, jsonBounds, logger }))
        }
      }
      // After the Host/Origin hook: a forbidden origin is refused before any credential is looked at.
      if (access !== undefined) registerAccess(scope, endpoint, access)
      if (websockets !== undefined && route.transports.includes('websocket')) registerWebSocket(scope, endpoint, websockets, limits)
      if (route.transports.includes('sse')) registerLegacySse(scope, endpoint, route.transports.includes('streamable_http'), metrics?.route(route.location), limits)
    })
  }
  try {
    virtualRoutes(endpoints)
  } catch (error) {
    for (const built of endpoints.values()) built.close()
    await app.close()
    await credentials.close().catch(() => undefined)
    if (options.store === undefined) await store.close().catch(() => undefined)
    if (options.limiter === undefined) await limiter?.close().catch(() => undefined)
    throw error
  }
  registerProtectedResourceMetadata(app, protectedRoutes)
  registerOAuthCallback(app, credentials, logger)

  app.get('/healthz', async () => ({ status: 'ok' }))
  // The public keys of the gateway's identity assertions, for upstreams to verify them (docs/upstream-credentials.md, identity assertion).
  if (config.upstream_identity !== undefined) {
    const signer = signerOf(credentials)
    app.get(signer.jwksPath, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(await signer.jwks()))
  }
  app.get('/readyz', async (_request, reply) => {
    const ready = await store.ready().catch(() => false)
    const body: Record<string, unknown> = { status: ready ? 'ready' : 'store unavailable' }
    // Proxy routes report each upstream as this worker sees it; a route serves (degraded) without them.
    const upstreams = [...endpoints].filter(([, endpoint]) => endpoint.extension !== undefined)
    if (upstreams.length > 0) body.upstreams = Object.fromEntries(upstreams.map(([location, endpoint]) => [location, endpoint.extension!.report()]))
    return reply.code(ready ? 200 : EdgeCode.MCP_EDGE_STORE_UNAVAILABLE.status).send(body)
  })

  return {
    app,
    logger,
    store,
    endpoints,
    events,
    upstreams,
    config,
    generation: options.generation ?? 0,
    metricsApp,
    hotPosts: hot,
    async close() {
      for (const endpoint of endpoints.values()) endpoint.close()
      await metricsApp?.close()
      await app.close()
      // Every request is answered now: the audit record's last lines out before the process may exit.
      await audit?.close()
      await credentials.close().catch(() => undefined)
      if (options.store === undefined) await store.close()
      if (options.limiter === undefined) await limiter?.close()
      // The access lines of the last requests are still in the log buffer: out before the exit.
      await flushLogger(logger)
    },
  }
}

/**
 * Waits (at most the store's connect_timeout) for a remote store to answer before the port opens:
 * a gateway that listened first answered its first requests 503 while Redis was still connecting.
 * A store still away then is logged, and the gateway listens anyway (503 and /readyz tell clients
 * and the balancer until it comes).
 */
export async function storeReachable(config: GatewayConfig, store: SessionStore, logger: Logger): Promise<void> {
  if (config.store.type !== 'redis') return
  const waitS = config.store.connect_timeout
  const deadline = Date.now() + waitS * 1000
  while (!(await store.ready().catch(() => false))) {
    if (Date.now() >= deadline) {
      logger.warn({ waitedS: waitS }, 'session store not reachable yet; listening anyway (requests that need it get 503 until it is)')
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Builds the gateway and listens; `url` is the base URL actually bound (port 0 picks a free port). */
export async function startGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway & { url: string }> {
  const gateway = await buildGateway(config, options)
  await storeReachable(config, gateway.store, gateway.logger)
  await gateway.app.listen({ host: config.listen.host, port: config.listen.port })
  if (gateway.metricsApp !== undefined && config.metrics.listen !== undefined) {
    await gateway.metricsApp.listen({ host: config.metrics.listen.host, port: config.metrics.listen.port })
  }
  const address = gateway.app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : config.listen.port
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host
  return Object.assign(gateway, { url: `http://${host}:${port}` })
}
