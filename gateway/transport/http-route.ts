/**
 * What every HTTP method of one Streamable HTTP route shares: the endpoint and its store, the streams
 * open here, the request log, and the checks that admit a request to a session (Mcp-Session-Id,
 * MCP-Protocol-Version). Built once per route by `registerStreamableHttp`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { callerOf } from '../edge/access-hook.ts'
import { limitRefusal, type LimitAnswer, type RouteLimits } from '../edge/limits.ts'
import type { RouteMetrics } from '../edge/metrics.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { SessionRecord } from '../store/store.ts'
import { EdgeError } from '../wire/errors.ts'
import type { RequestId } from '../wire/jsonrpc.ts'
import { isSupportedVersion } from '../wire/versions.ts'
import { FollowerLimit } from './follower-limit.ts'
import type { ExchangeOptions, OpenStreams } from './post-exchange.ts'
import { replyError } from './reply-error.ts'
import { RequestLog } from './request-log.ts'
import type { SendBufferLimits } from './send-backlog.ts'
import { findSession } from './session-door.ts'
import type { StatelessPostOptions } from './stateless-post.ts'
import type { FollowOptions } from './stream-follower.ts'
import { probeChannel } from './stream-relay.ts'
import { RESERVED } from '../protocol/session-lifecycle.ts'

/** A request header's first value. */
export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** True when an Accept header takes `type` (or its family, or anything). */
export function accepts(accept: string | undefined, type: string, family: string): boolean {
  return accept !== undefined && (accept.includes(type) || accept.includes(`${family}/*`) || accept.includes('*/*'))
}

export class HttpRoute {
  readonly endpoint: McpEndpoint
  /** The POST and standalone streams open on this worker, by `<session> <stream>`. */
  readonly openStreams: OpenStreams = new Map()
  readonly log: RequestLog
  readonly exchanges: ExchangeOptions
  readonly stateless: StatelessPostOptions
  readonly following: FollowOptions
  readonly followers: FollowerLimit
  /** What a stream may hold unsent for a client that does not read. */
  readonly sendBuffer: SendBufferLimits
  /** The route's rate limits and quotas; undefined when it has none. */
  readonly limits: RouteLimits | undefined

  constructor(endpoint: McpEndpoint, metrics: RouteMetrics | undefined, limits: RouteLimits | undefined) {
    this.limits = limits
    const { route, store, logger } = endpoint
    this.endpoint = endpoint
    this.log = new RequestLog(logger, metrics)
    const sendBuffer: SendBufferLimits = { maxBytes: route.send_buffer.max_bytes, maxMessages: route.send_buffer.max_messages }
    this.sendBuffer = sendBuffer
    this.exchanges = { store, resumable: route.resumability, openStreams: this.openStreams, log: this.log, sendBuffer }
    this.stateless = { endpoint, dispatcher: endpoint.stateless, exchanges: { ...this.exchanges, resumable: false, era: '2026-07-28' } }
    this.following = { probeChannel: probeChannel(route.location), producerTimeoutMs: route.producer_timeout * 1000, sendBuffer }
    this.followers = new FollowerLimit(route.max_followers)
  }

  /** Answers a request refused by the limits (429 through the error table); `id` is the request's. */
  refuse(reply: FastifyReply, answer: LimitAnswer, id: RequestId | null, started: number, method: string): void {
    const refusal = limitRefusal(answer)
    replyError(reply, refusal, id)
    this.log.end(started, method, refusal.status, undefined)
  }

  /** The transport-level rules for a GET or DELETE: true when refused (the reply says why). */
  async overLimit(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const limits = this.limits
    if (limits === undefined || !limits.needsCaller) return false
    const outcome = await limits.check(callerOf(request), undefined, undefined)
    if (typeof outcome === 'boolean') return false
    this.refuse(reply, outcome, null, -1, request.method)
    return true
  }

  /** GET and DELETE belong to sessions; without a session id (and a legacy version) they are 405 (stateless wire). */
  sessionlessMethodNotAllowed(request: FastifyRequest, reply: FastifyReply): boolean {
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
  sessionFor(
    request: FastifyRequest,
    reply: FastifyReply,
    id: RequestId | null,
    sessionId = header(request, 'mcp-session-id'),
  ): SessionRecord | undefined | Promise<SessionRecord | undefined> {
    if (sessionId === undefined) {
      replyError(reply, new EdgeError('MCP_EDGE_SESSION_REQUIRED'), id)
      return undefined
    }
    const found = findSession(this.endpoint.store, this.endpoint.route.location, sessionId)
    if (found instanceof Promise) return found.then((record) => this.#admit(request, reply, id, sessionId, record))
    return this.#admit(request, reply, id, sessionId, found)
  }

  #admit(request: FastifyRequest, reply: FastifyReply, id: RequestId | null, sessionId: string, record: SessionRecord | undefined): SessionRecord | undefined {
    // Another principal's session is as unknown as a session that never existed: a session id is not a credential.
    // A session an HTTP+SSE stream reserved is that stream's to initialize (transport/legacy-sse.ts).
    if (record === undefined || record.principal !== callerOf(request).principal || record.protocolVersion === RESERVED) {
      replyError(reply, new EdgeError('MCP_EDGE_SESSION_NOT_FOUND'), id)
      return undefined
    }
    const version = header(request, 'mcp-protocol-version')
    if (version !== undefined && !isSupportedVersion(version)) {
      replyError(reply, new EdgeError('MCP_EDGE_BAD_PROTOCOL_VERSION', `Bad Request: unsupported MCP-Protocol-Version ${version}`), id)
      return undefined
    }
    this.endpoint.store.touch(sessionId)
    return record
  }
}
