/**
 * The HTTP+SSE transport of MCP 2024-11-05 on a route (`transports: [..., sse]`), for clients that
 * speak only it. Its sessions are sessions like any other (in the store, any worker serves them);
 * only their outlet, the GET stream, lives on one worker, and the bus carries to it what a POST
 * served elsewhere produces (notifier.ts `toOutlet`):
 *
 *   GET  <location>/sse ─► bounds (per client, per route, max_sessions) ─► a reserved session
 *        ─► event: endpoint  data: <location>/messages?sessionId=<id> ─► event: message … (until it closes: the session ends)
 *   POST <location>/messages?sessionId=<id> (any worker) ─► session (404 unknown / another principal's)
 *        ─► first message: initialize (the reservation becomes the session) ─► 202
 *        ─► request ─► rate limits ─► dispatch ─► 202; progress, server→client requests, the response ─► the stream
 *        ─► notification, the client's answer ─► endpoint ─► 202
 *
 * Host/Origin checks, CORS and the access phase are the route's, as on its other transports (when the
 * route does not serve Streamable HTTP, this registers the Host/Origin check itself).
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { callerOf } from '../edge/access-hook.ts'
import { preflight, registerCors } from '../edge/cors.ts'
import { limitRefusal, LimitAnswer, sessionQuotaRefusal, toolLimitResult, type RouteLimits } from '../edge/limits.ts'
import type { RouteMetrics } from '../edge/metrics.ts'
import { hasDuplicateHost, OriginPolicy } from '../edge/origin-check.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { RESERVED } from '../protocol/session-lifecycle.ts'
import type { RequestSink } from '../protocol/sink.ts'
import type { SessionRecord } from '../store/store.ts'
import type { Caller } from '../wire/caller.ts'
import { EdgeError, type McpError, refusalOf } from '../wire/errors.ts'
import { classify, idOf, resultMessage, type Incoming, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../wire/jsonrpc.ts'
import { accepts, header } from './http-route.ts'
import { LegacyStream, LegacyStreamCounts } from './legacy-sse-stream.ts'
import { replyError } from './reply-error.ts'
import { RequestLog } from './request-log.ts'
import { findSession, initializeRefusal, serveSession } from './session-door.ts'
import { sseHeaders } from './sse.ts'

const KEEPALIVE_MS = 25_000
/** What an access module is told of this transport's requests (edge/access-hook.ts reads it). */
const SSE_ROUTE = { transport: 'sse' as const }

/** The paths of a route's HTTP+SSE transport: the stream and the endpoint its event names. */
export function legacySsePaths(location: string): { stream: string; messages: string } {
  const base = location.replace(/\/+$/, '')
  return { stream: `${base}/sse`, messages: `${base}/messages` }
}

/**
 * Serves the route's HTTP+SSE transport; `guarded` says the route's Streamable HTTP transport already
 * checks Host/Origin and adds CORS headers in this scope.
 */
export function registerLegacySse(app: FastifyInstance, endpoint: McpEndpoint, guarded: boolean, metrics?: RouteMetrics, limits?: RouteLimits): void {
  const { route, store, logger, notifier } = endpoint
  const paths = legacySsePaths(route.location)
  const counts = new LegacyStreamCounts(route.limits.legacy_sse_streams_per_client, route.limits.legacy_sse_streams)
  const sendBuffer = { maxBytes: route.send_buffer.max_bytes, maxMessages: route.send_buffer.max_messages }
  const log = new RequestLog(logger, metrics)

  if (!guarded) {
    const policy = new OriginPolicy(route.allowed_origins)
    app.addHook('onRequest', (request, reply, done) => {
      if (hasDuplicateHost(request.raw.rawHeaders)) return void replyError(reply, new EdgeError('MCP_EDGE_DUPLICATE_HOST'))
      if (!policy.allows(request.headers.host, header(request, 'origin'))) return void replyError(reply, new EdgeError('MCP_EDGE_FORBIDDEN_ORIGIN'))
      done()
    })
    registerCors(app, paths.stream)
  } else {
    app.options(paths.stream, preflight)
  }
  app.options(paths.messages, preflight)

  /** A sink whose every message goes to the session's stream, wherever it is held. */
  class StreamSink implements RequestSink {
    readonly #sessionId: string
    constructor(sessionId: string) {
      this.#sessionId = sessionId
    }
    send(message: JsonRpcMessage): void {
      notifier.toOutlet(this.#sessionId, message)
    }
    respond(message: JsonRpcMessage): void {
      notifier.toOutlet(this.#sessionId, message)
    }
    abandon(): void {}
    detach(): boolean {
      return false
    }
  }

  app.get(paths.stream, { exposeHeadRoute: false, config: SSE_ROUTE }, async (request, reply) => {
    const caller = callerOf(request)
    if (await refusedByRate(caller, reply)) return reply
    if (!accepts(request.headers.accept, 'text/event-stream', 'text')) {
      return replyError(reply, new EdgeError('MCP_EDGE_NOT_ACCEPTABLE', 'Not Acceptable: Accept must list text/event-stream'))
    }
    const over = counts.enter(caller.principal ?? caller.address, reply.raw)
    if (over === 'client') return replyError(reply, new EdgeError('MCP_EDGE_TOO_MANY_LEGACY_STREAMS', `Too Many Requests: this client already holds ${counts.perClient} HTTP+SSE streams (limits.legacy_sse_streams_per_client); close one first`))
    if (over === 'route') return replyError(reply, new EdgeError('MCP_EDGE_LEGACY_STREAMS_FULL', `Service Unavailable: this route holds ${counts.total} HTTP+SSE streams (limits.legacy_sse_streams); retry later`))
    let record: SessionRecord
    try {
      record = await endpoint.reserveSession(caller.principal, limits === undefined ? undefined : () => limits.reclaimable(caller, route.max_sessions, endpoint.idleTtlMs))
      if (limits !== undefined && !(await limits.admitSession(caller, record.id))) {
        await endpoint.deleteSession(record.id)
        return replyError(reply, sessionQuotaRefusal(limits.sessionsPerPrincipal))
      }
    } catch (error) {
      return replyError(reply, initializeRefusal(error, logger))
    }
    const stream = new LegacyStream(reply.raw, sendBuffer)
    endpoint.openOutlet(record.id, stream)
    reply.hijack()
    reply.raw.writeHead(200, sseHeaders(undefined))
    stream.announce(`${paths.messages}?sessionId=${record.id}`)
    // A client that only listens is not idle: each keep-alive pushes the session's expiry back.
    const keepAlive = setInterval(() => {
      stream.comment('keepalive')
      store.touch(record.id)
    }, KEEPALIVE_MS)
    keepAlive.unref()
    reply.raw.once('close', () => {
      clearInterval(keepAlive)
      endpoint.closeOutlet(record.id, stream)
      // The old transport has no DELETE and no resumption: the stream gone, the session is over.
      endpoint.deleteSession(record.id).catch((error: unknown) => logger.warn({ err: error, sessionId: record.id }, 'cannot end an HTTP+SSE session'))
    })
    logger.info({ sessionId: record.id, principal: record.principal, transport: 'sse' }, 'HTTP+SSE stream opened')
    return reply
  })

  app.post(paths.messages, { config: SSE_ROUTE }, async (request, reply) => {
    const started = log.start()
    const sessionId = (request.query as Record<string, unknown> | undefined)?.sessionId
    if (Array.isArray(request.body)) return replyError(reply, new EdgeError('MCP_EDGE_BATCH_REFUSED', 'The HTTP+SSE transport takes one message per POST'))
    let incoming: Incoming
    try {
      incoming = classify(request.body)
    } catch (error) {
      return replyError(reply, refusalOf(error as McpError), idOf(request.body))
    }
    const id = idOf(incoming.message)
    if (typeof sessionId !== 'string' || sessionId === '') return replyError(reply, new EdgeError('MCP_EDGE_LEGACY_SESSION_REQUIRED'), id)
    const caller = callerOf(request)
    let record: SessionRecord | undefined
    try {
      record = await findSession(store, route.location, sessionId)
    } catch (error) {
      return replyError(reply, initializeRefusal(error, logger), id)
    }
    // Another principal's session is as unknown as one that never existed.
    if (record === undefined || record.principal !== caller.principal) return replyError(reply, new EdgeError('MCP_EDGE_SESSION_NOT_FOUND'), id)
    store.touch(record.id)
    const method = incoming.kind === 'request' ? incoming.message.method : incoming.kind === 'notification' ? incoming.message.method : 'response'
    const initializing = incoming.kind === 'request' && method === 'initialize'
    if (initializing !== (record.protocolVersion === RESERVED)) return replyError(reply, new EdgeError('MCP_EDGE_LEGACY_NOT_INITIALIZED'), id)
    if (initializing) return initialize(incoming.message as JsonRpcRequest, record, caller, reply, started)

    const slot = incoming.kind === 'request' ? record.id : undefined
    const tool = incoming.kind === 'request' && method === 'tools/call' && typeof incoming.message.params?.name === 'string' ? incoming.message.params.name : undefined
    let outcome = limits === undefined ? false : limits.check(limits.needsCaller ? caller : undefined, slot, tool)
    if (outcome instanceof Promise) outcome = await outcome
    if (outcome instanceof LimitAnswer && outcome.kind !== 'tool') {
      const refusal = limitRefusal(outcome)
      log.end(started, method, refusal.status, record.id, undefined, record.principal)
      return replyError(reply, refusal, id)
    }
    if (outcome instanceof LimitAnswer) {
      // A tools/call over its tool's limit: an isError result the model can act on, on the stream.
      notifier.toOutlet(record.id, resultMessage(id as RequestId, toolLimitResult(outcome)))
    } else {
      const running = serveSession(endpoint, record, incoming, () => new StreamSink(record.id), caller, request.headers)
      if (outcome === true) {
        if (running === undefined) limits!.done(record.id)
        else void running.finally(() => limits!.done(record.id)).catch(() => undefined)
      }
      // A notification or an answer is done once handed over; a request's outcome goes to the stream.
      if (running !== undefined && incoming.kind !== 'request') await running
    }
    log.end(started, method, 202, record.id, undefined, record.principal)
    return reply.code(202).send()
  })

  /** The session's initialize: the reservation becomes the session, and its answer goes to the stream. */
  async function initialize(message: JsonRpcRequest, reserved: SessionRecord, caller: Caller, reply: FastifyReply, started: number): Promise<FastifyReply> {
    let response
    try {
      ;({ response } = await endpoint.initialize(message, caller.principal, undefined, reserved))
    } catch (error) {
      return replyError(reply, initializeRefusal(error, logger), message.id)
    }
    notifier.toOutlet(reserved.id, response)
    log.end(started, 'initialize', 202, reserved.id, undefined, reserved.principal)
    return reply.code(202).send()
  }

  /** The route's transport-level rate rules for a GET: true when refused (the reply says why). */
  async function refusedByRate(caller: Caller, reply: FastifyReply): Promise<boolean> {
    if (limits === undefined || !limits.needsCaller) return false
    const outcome = await limits.check(caller, undefined, undefined)
    if (typeof outcome === 'boolean') return false
    replyError(reply, limitRefusal(outcome), null)
    return true
  }
}
