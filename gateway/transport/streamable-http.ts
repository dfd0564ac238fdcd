/**
 * The Streamable HTTP transport of one route (MCP 2025-11-25 §Transports): POST carries one
 * JSON-RPC message, GET opens the session's standalone SSE stream (or resumes a stream with
 * Last-Event-ID), DELETE ends the session. Checks run cheapest-first and in the order a client
 * needs to learn what is wrong:
 *
 *   Origin/Host (403) → Accept (406) → Content-Type (415) → body size (413) → JSON (400 -32700)
 *   → JSON-RPC shape (400 -32600) → rate limits, session slot (429) → session id (400 / 404)
 *   → MCP-Protocol-Version (400) → dispatch (a tools/call over its tool's limit: an isError result)
 *
 * OPTIONS is the CORS preflight (edge/cors.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { callerOf } from '../edge/access-hook.ts'
import { registerCors } from '../edge/cors.ts'
import { limitRefusal, sessionQuotaRefusal, toolLimitResult, type LimitAnswer, type LimitOutcome, type RouteLimits } from '../edge/limits.ts'
import { hasDuplicateHost, OriginPolicy } from '../edge/origin-check.ts'
import { EdgeError, McpError, refusalOf } from '../wire/errors.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { STANDALONE_STREAM, type SessionOutlet } from '../protocol/sink.ts'
import { classify, idOf, resultMessage, type Incoming, type JsonRpcRequest } from '../wire/jsonrpc.ts'
import { isStateless } from '../protocol/stateless/envelope.ts'
import { isSupportedVersion } from '../wire/versions.ts'
import { parseEventId, StoreUnavailableError, type SessionRecord } from '../store/store.ts'
import { PostExchange, type ExchangeOptions, type OpenStreams } from './post-exchange.ts'
import { replyError, writeError } from './reply-error.ts'
import { RequestLog } from './request-log.ts'
import type { RouteMetrics } from '../edge/metrics.ts'
import { SseChannel, sseHeaders } from './sse.ts'
import { FollowerLimit } from './follower-limit.ts'
import type { SendBufferLimits } from './send-backlog.ts'
import { followStream, type FollowOptions } from './stream-follower.ts'
import { probeChannel, relayChannel } from './stream-relay.ts'
import { statelessPost } from './stateless-post.ts'

const KEEPALIVE_MS = 25_000

function accepts(accept: string | undefined, type: string, family: string): boolean {
  return accept !== undefined && (accept.includes(type) || accept.includes(`${family}/*`) || accept.includes('*/*'))
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** The tool a tools/call names, when it names one. */
function toolOf(incoming: Incoming): string | undefined {
  if (incoming.kind !== 'request' || incoming.message.method !== 'tools/call') return undefined
  const name = incoming.message.params?.name
  return typeof name === 'string' ? name : undefined
}

/** Serves a route over Streamable HTTP; `limits` are its rate limits and quotas (undefined: none). */
export function registerStreamableHttp(app: FastifyInstance, endpoint: McpEndpoint, metrics?: RouteMetrics, limits?: RouteLimits): void {
  const { route, store, logger } = endpoint
  const policy = new OriginPolicy(route.allowed_origins)
  const openStreams: OpenStreams = new Map()
  const log = new RequestLog(logger, metrics)
  const sendBuffer: SendBufferLimits = { maxBytes: route.send_buffer.max_bytes, maxMessages: route.send_buffer.max_messages }
  const exchanges: ExchangeOptions = { store, resumable: route.resumability, openStreams, log, sendBuffer }
  const stateless = { endpoint, dispatcher: endpoint.stateless, exchanges: { ...exchanges, resumable: false, era: '2026-07-28' } }
  const following: FollowOptions = { probeChannel: probeChannel(route.location), producerTimeoutMs: route.producer_timeout * 1000, sendBuffer }
  const followers = new FollowerLimit(route.max_followers)

  // Followers elsewhere ask whether the streams they follow still have a producer: answer for ours.
  if (route.resumability) {
    const stopAnswering = store.bus.subscribe(following.probeChannel, (message) => {
      if (message.type !== 'probe' || !openStreams.has(`${message.sessionId} ${message.streamId}`)) return
      store.bus.publish(relayChannel(message.sessionId, message.streamId), { type: 'alive' }).catch(() => undefined)
    })
    app.addHook('onClose', async () => stopAnswering())
  }

  /** GET and DELETE belong to sessions; without a session id (and a legacy version) they are 405 (stateless wire). */
  function sessionlessMethodNotAllowed(request: FastifyRequest, reply: FastifyReply): boolean {
    if (header(request, 'mcp-session-id') !== undefined) return false
    const version = header(request, 'mcp-protocol-version')
    if (version !== undefined && isSupportedVersion(version)) return false
    replyError(reply, new EdgeError('MCP_EDGE_SESSION_METHOD_NOT_ALLOWED', `Method Not Allowed: ${request.method} needs a session (stateless clients use POST)`))
    return true
  }

  /**
   * The session a request names, or undefined with a reply already sent explaining why there is none.
   * Synchronous when the store knows the session without waiting (the hot path); a promise otherwise.
   */
  function sessionFor(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string | number | null,
    sessionId = header(request, 'mcp-session-id'),
  ): SessionRecord | undefined | Promise<SessionRecord | undefined> {
    if (sessionId === undefined) {
      replyError(reply, new EdgeError('MCP_EDGE_SESSION_REQUIRED'), id)
      return undefined
    }
    const known = store.peek(sessionId)
    if (known !== undefined) return admit(request, reply, id, sessionId, known)
    return store.get(sessionId).then((record) => admit(request, reply, id, sessionId, record))
  }

  function admit(request: FastifyRequest, reply: FastifyReply, id: string | number | null, sessionId: string, record: SessionRecord | undefined): SessionRecord | undefined {
    // Another principal's session is as unknown as a session that never existed: a session id is not a credential.
    if (record === undefined || record.route !== route.location || record.principal !== callerOf(request).principal) {
      replyError(reply, new EdgeError('MCP_EDGE_SESSION_NOT_FOUND'), id)
      return undefined
    }
    const version = header(request, 'mcp-protocol-version')
    if (version !== undefined && !isSupportedVersion(version)) {
      replyError(reply, new EdgeError('MCP_EDGE_BAD_PROTOCOL_VERSION', `Bad Request: unsupported MCP-Protocol-Version ${version}`), id)
      return undefined
    }
    store.touch(sessionId)
    return record
  }

  // A callback hook, not an async one: it runs on every request, and a promise per request shows in
  // the profile. A hook that has replied does not call `done`.
  app.addHook('onRequest', (request, reply, done) => {
    if (hasDuplicateHost(request.raw.rawHeaders)) {
      replyError(reply, new EdgeError('MCP_EDGE_DUPLICATE_HOST'))
      return
    }
    if (!policy.allows(request.headers.host, header(request, 'origin'))) {
      replyError(reply, new EdgeError('MCP_EDGE_FORBIDDEN_ORIGIN'))
      return
    }
    if (request.method === 'POST') {
      if (!accepts(request.headers.accept, 'application/json', 'application') || !accepts(request.headers.accept, 'text/event-stream', 'text')) {
        replyError(reply, new EdgeError('MCP_EDGE_NOT_ACCEPTABLE'))
        return
      }
      const type = request.headers['content-type']
      if (type === undefined || !type.toLowerCase().startsWith('application/json')) {
        replyError(reply, new EdgeError('MCP_EDGE_UNSUPPORTED_MEDIA_TYPE'))
        return
      }
    }
    done()
  })
  // After the Origin/Host check: an Origin that reaches it is allowed.
  registerCors(app, route.location)

  /** Answers a request refused by the limits (429 through the error table); `id` is the request's. */
  function refuse(reply: FastifyReply, answer: LimitAnswer, id: string | number | null, started: number, method: string): void {
    const refusal = limitRefusal(answer)
    replyError(reply, refusal, id)
    log.end(started, method, refusal.status, undefined)
  }

  /** The transport-level rules for a GET or DELETE: true when refused (the reply says why). */
  async function overLimit(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    if (limits === undefined || !limits.needsCaller) return false
    const outcome = await limits.check(callerOf(request), undefined, undefined)
    if (typeof outcome === 'boolean') return false
    refuse(reply, outcome, null, -1, request.method)
    return true
  }

  // Not an async function: a tools/call whose tool is synchronous is answered before this returns,
  // with no promise made for it. Slower paths return theirs (Fastify routes their rejections).
  app.post(route.location, (request, reply) => {
    const started = log.start()
    let incoming
    try {
      incoming = classify(request.body)
    } catch (error) {
      replyError(reply, refusalOf(error as McpError), idOf(request.body))
      return undefined
    }
    const sessionId = header(request, 'mcp-session-id')
    if (limits === undefined) return post(request, reply, incoming, sessionId, started, undefined)
    // Only requests hold a slot of their session: notifications and answers are done at once.
    const slot = incoming.kind === 'request' ? sessionId : undefined
    const outcome = limits.check(limits.needsCaller ? callerOf(request) : undefined, slot, toolOf(incoming))
    if (outcome instanceof Promise) return outcome.then((settled) => limited(request, reply, incoming, sessionId, started, settled))
    return limited(request, reply, incoming, sessionId, started, outcome)
  })

  /** A POST once the limits have spoken: refused, served, or served holding a session slot given back at its end. */
  function limited(request: FastifyRequest, reply: FastifyReply, incoming: Incoming, sessionId: string | undefined, started: number, outcome: LimitOutcome): Promise<unknown> | undefined {
    if (outcome === false) return post(request, reply, incoming, sessionId, started, undefined)
    if (outcome === true) {
      const release = (): void => limits!.done(sessionId!)
      let running
      try {
        running = post(request, reply, incoming, sessionId, started, undefined)
      } catch (error) {
        release()
        throw error
      }
      if (running === undefined) release()
      else void running.then(release, release)
      return running
    }
    if (outcome.kind === 'tool') return post(request, reply, incoming, sessionId, started, outcome)
    refuse(reply, outcome, idOf(incoming.message), started, incoming.kind === 'request' ? incoming.message.method : incoming.kind)
    return undefined
  }

  /** A POST past the limits; `toolLimit` set when its tools/call is over its tool's limit. */
  function post(request: FastifyRequest, reply: FastifyReply, incoming: Incoming, sessionId: string | undefined, started: number, toolLimit: LimitAnswer | undefined): Promise<unknown> | undefined {
    if (sessionId === undefined && isStateless(request.body, header(request, 'mcp-protocol-version'))) {
      return statelessPost(request, reply, incoming, stateless, toolLimit)
    }
    if (incoming.kind === 'request' && incoming.message.method === 'initialize') return initialize(incoming.message, request, reply, started)

    const found = sessionFor(request, reply, idOf(incoming.message), sessionId)
    if (found instanceof Promise) return found.then((record) => serve(record, incoming, request, reply, started, toolLimit))
    return serve(found, incoming, request, reply, started, toolLimit)
  }

  /** A session's message, once its record is known (undefined: the reply already says why not). */
  function serve(record: SessionRecord | undefined, incoming: Incoming, request: FastifyRequest, reply: FastifyReply, started: number, toolLimit?: LimitAnswer): Promise<unknown> | undefined {
    if (record === undefined) return undefined
    switch (incoming.kind) {
      case 'request': {
        const exchange = new PostExchange(reply, record.id, incoming.message.method, started, exchanges, incoming.message.id)
        if (toolLimit !== undefined) {
          exchange.respond(resultMessage(incoming.message.id, toolLimitResult(toolLimit)))
          return undefined
        }
        return endpoint.handleRequest(record, incoming.message, exchange, callerOf(request), request.headers)
      }
      case 'notification':
        return endpoint.handleNotification(record, incoming.message).then(() => {
          log.end(started, incoming.message.method, 202, record.id, undefined, record.principal)
          reply.code(202).send()
        })
      case 'response':
        endpoint.handleResponse(record, incoming.message)
        log.end(started, 'response', 202, record.id, undefined, record.principal)
        reply.code(202).send()
        return undefined
    }
  }

  async function initialize(request: JsonRpcRequest, http: FastifyRequest, reply: FastifyReply, started: number): Promise<FastifyReply> {
    try {
      const { record, response } = await endpoint.initialize(request, callerOf(http).principal)
      if (limits !== undefined && !(await admitted(record, http))) {
        const refusal = sessionQuotaRefusal(limits.sessionsPerPrincipal)
        log.end(started, 'initialize', refusal.status, undefined)
        return replyError(reply, refusal, request.id)
      }
      log.end(started, 'initialize', 200, record.id, undefined, record.principal)
      return reply.code(200).header('content-type', 'application/json').header('mcp-session-id', record.id).send(JSON.stringify(response))
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        logger.warn({ err: error, method: 'initialize' }, 'session store unavailable')
        return replyError(reply, new EdgeError('MCP_EDGE_STORE_UNAVAILABLE'), request.id)
      }
      if (error instanceof EdgeError) return replyError(reply, error, request.id)
      if (!(error instanceof McpError)) throw error
      return replyError(reply, refusalOf(error), request.id)
    }
  }

  /** Counts a new session under its creator (sessions_per_principal); one over the quota is deleted at once. */
  async function admitted(record: SessionRecord, request: FastifyRequest): Promise<boolean> {
    let admitted
    try {
      admitted = await limits!.admitSession(callerOf(request), record.id)
    } catch (error) {
      await endpoint.deleteSession(record.id).catch(() => undefined)
      throw error
    }
    if (!admitted) await endpoint.deleteSession(record.id)
    return admitted
  }

  // No automatic HEAD route: it would run this handler and hold the session's one stream slot.
  app.get(route.location, { exposeHeadRoute: false }, async (request, reply) => {
    if (sessionlessMethodNotAllowed(request, reply)) return reply
    if (await overLimit(request, reply)) return reply
    if (!accepts(request.headers.accept, 'text/event-stream', 'text')) {
      return replyError(reply, new EdgeError('MCP_EDGE_NOT_ACCEPTABLE', 'Not Acceptable: Accept must list text/event-stream'))
    }
    const record = await sessionFor(request, reply, null)
    if (record === undefined) return reply
    const lastEventId = header(request, 'last-event-id')
    if (lastEventId !== undefined && route.resumability) return resume(record, lastEventId, reply)

    const channel = new SseChannel({ store, sessionId: record.id, streamId: STANDALONE_STREAM, resumable: route.resumability, sendBuffer })
    const outlet = standaloneOutlet(channel)
    if (!endpoint.openOutlet(record.id, outlet)) return conflict(reply)
    reply.hijack()
    reply.raw.writeHead(200, sseHeaders(record.id))
    // Without resumability no priming event follows: send the head now, not with the first event.
    reply.raw.flushHeaders()
    channel.attach(reply.raw, keepAlive(channel, record.id, () => endpoint.closeOutlet(record.id, outlet)))
    channel.prime()
    return reply
  })

  /**
   * Replays what the client missed on the stream its last event id names, then follows it live. The
   * standalone stream has one place per session (409 beyond it); a request's stream counts against
   * `max_followers` (429 beyond it). An id naming a stream the log does not hold is refused at once.
   */
  async function resume(record: SessionRecord, lastEventId: string, reply: FastifyReply): Promise<FastifyReply> {
    const streamId = parseEventId(lastEventId)?.stream
    if (streamId === undefined) return replyError(reply, new EdgeError('MCP_EDGE_BAD_EVENT_ID', `Malformed Last-Event-ID ${lastEventId}`))
    if (streamId === STANDALONE_STREAM) return resumeStandalone(record, lastEventId, reply)
    if (!followers.enter(record.id, reply.raw)) {
      return replyError(reply, new EdgeError('MCP_EDGE_TOO_MANY_FOLLOWERS', `Too many resumed streams on this session (max_followers ${followers.max}); close one first`))
    }
    const channel = openStreams.get(`${record.id} ${streamId}`)
    if (channel === undefined) {
      // The stream lives on another worker (or host), or it ended: replay the log, then follow the bus.
      const open = (): void => {
        reply.hijack()
        reply.raw.writeHead(200, sseHeaders(record.id))
        reply.raw.flushHeaders()
      }
      if (await followStream(store, record.id, lastEventId, reply.raw, open, following)) return reply
      return replyError(reply, unknownEventId(lastEventId))
    }
    reply.hijack()
    const raw = reply.raw
    const open = (): void => {
      raw.writeHead(200, sseHeaders(record.id))
      raw.flushHeaders() // when nothing was missed, no event follows soon
    }
    if (!(await channel.resume(raw, lastEventId, open))) {
      writeError(raw, unknownEventId(lastEventId))
    }
    return reply
  }

  /**
   * The session's standalone stream, resumed: its missed events, then live. When the log holds none of
   * its events (they expired while nobody listened) the stream starts afresh: it is the session's own,
   * so it exists as long as the session does.
   */
  async function resumeStandalone(record: SessionRecord, lastEventId: string, reply: FastifyReply): Promise<FastifyReply> {
    const channel = new SseChannel({ store, sessionId: record.id, streamId: STANDALONE_STREAM, resumable: true, sendBuffer })
    const outlet = standaloneOutlet(channel)
    if (!endpoint.openOutlet(record.id, outlet)) return conflict(reply)
    const onDetach = keepAlive(channel, record.id, () => endpoint.closeOutlet(record.id, outlet))
    reply.hijack()
    const raw = reply.raw
    const open = (): void => {
      raw.writeHead(200, sseHeaders(record.id))
      raw.flushHeaders()
    }
    if (!(await channel.resume(raw, lastEventId, open, onDetach))) {
      open()
      channel.attach(raw, onDetach)
      channel.prime()
    }
    return reply
  }

  function standaloneOutlet(channel: SseChannel): SessionOutlet {
    return {
      send: (message) => channel.send(JSON.stringify(message)),
      sendLogged: (data, eventId) => channel.sendLogged(data, eventId),
      close: () => void channel.finish(),
    }
  }

  function conflict(reply: FastifyReply): FastifyReply {
    return replyError(reply, new EdgeError('MCP_EDGE_STREAM_CONFLICT'))
  }

  function unknownEventId(lastEventId: string): EdgeError {
    return new EdgeError('MCP_EDGE_UNKNOWN_EVENT_ID', `Unknown Last-Event-ID ${lastEventId}: it expired or never existed; open a new stream`)
  }

  /**
   * Starts keep-alive comments on a standalone stream; each also pushes the session's idle expiry
   * back, since a client that only listens is not idle. The returned function stops them and runs `onClose`.
   */
  function keepAlive(channel: SseChannel, sessionId: string, onClose: () => void): () => void {
    const timer = setInterval(() => {
      channel.comment('keepalive')
      store.touch(sessionId)
    }, KEEPALIVE_MS)
    timer.unref()
    return () => {
      clearInterval(timer)
      onClose()
    }
  }

  // Anything else on the MCP path is a method the endpoint does not allow, not a missing route.
  app.route({
    method: ['PUT', 'PATCH'],
    url: route.location,
    handler: async (_request, reply) =>
      replyError(reply, new EdgeError('MCP_EDGE_METHOD_NOT_ALLOWED')),
  })

  app.delete(route.location, async (request, reply) => {
    if (sessionlessMethodNotAllowed(request, reply)) return reply
    if (await overLimit(request, reply)) return reply
    const record = await sessionFor(request, reply, null)
    if (record === undefined) return reply
    await endpoint.deleteSession(record.id)
    for (const [key, channel] of openStreams) {
      if (key.startsWith(`${record.id} `)) void channel.finish()
    }
    logger.info({ sessionId: record.id, principal: record.principal, method: 'DELETE', status: 200 }, 'session deleted')
    return reply.code(200).send()
  })
}
