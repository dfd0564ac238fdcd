/**
 * The Streamable HTTP transport of one route (MCP 2025-11-25 §Transports): POST carries one
 * JSON-RPC message (`http-post.ts`), GET opens the session's standalone SSE stream or resumes a
 * stream with Last-Event-ID (`http-stream.ts`), DELETE ends the session. Checks run cheapest-first
 * and in the order a client needs to learn what is wrong:
 *
 *   Origin/Host (403) → Accept (406) → Content-Type (415) → body size (413) → JSON (400 -32700)
 *   → JSON-RPC shape (400 -32600) → rate limits, session slot (429) → session id (400 / 404)
 *   → MCP-Protocol-Version (400) → dispatch (a tools/call over its tool's limit: an isError result)
 *
 * OPTIONS is the CORS preflight (edge/cors.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { refusedUnread } from '../events/refused-call.ts'
import { registerCors } from '../edge/cors.ts'
import type { RouteLimits } from '../edge/limits.ts'
import type { RouteMetrics } from '../edge/metrics.ts'
import { hasDuplicateHost, OriginPolicy } from '../edge/origin-check.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { EdgeError } from '../wire/errors.ts'
import { registerPost } from './http-post.ts'
import { accepts, header, HttpRoute } from './http-route.ts'
import { registerStream } from './http-stream.ts'
import { replyError } from './reply-error.ts'

/**
 * Serves a route over Streamable HTTP; `limits` are its rate limits and quotas (undefined: none).
 * Returns what the route's hot path (hot-post.ts) shares with it.
 */
export function registerStreamableHttp(app: FastifyInstance, endpoint: McpEndpoint, metrics?: RouteMetrics, limits?: RouteLimits): { http: HttpRoute; policy: OriginPolicy } {
  const { route, logger } = endpoint
  const policy = new OriginPolicy(route.allowed_origins)
  const http = new HttpRoute(endpoint, metrics, limits)

  // A callback hook, not an async one: it runs on every request, and a promise per request shows in
  // the profile. A hook that has replied does not call `done`.
  // Each refusal here comes before the body is read: the audit record gets a line with the rule, no method.
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: EdgeError, decision: string): void => {
    refusedUnread(endpoint.calls, request.headers, decision, error.message)
    replyError(reply, error)
  }
  app.addHook('onRequest', (request, reply, done) => {
    if (hasDuplicateHost(request.raw.rawHeaders)) return refuse(request, reply, new EdgeError('MCP_EDGE_DUPLICATE_HOST'), 'origin')
    if (!policy.allows(request.headers.host, header(request, 'origin'))) return refuse(request, reply, new EdgeError('MCP_EDGE_FORBIDDEN_ORIGIN'), 'origin')
    if (request.method === 'POST') {
      if (!accepts(request.headers.accept, 'application/json', 'application') || !accepts(request.headers.accept, 'text/event-stream', 'text')) {
        return refuse(request, reply, new EdgeError('MCP_EDGE_NOT_ACCEPTABLE'), 'media_type')
      }
      const type = request.headers['content-type']
      // Lower-cased only when not already so: a string made per request shows in the profile.
      if (type === undefined || (!type.startsWith('application/json') && !type.toLowerCase().startsWith('application/json'))) {
        return refuse(request, reply, new EdgeError('MCP_EDGE_UNSUPPORTED_MEDIA_TYPE'), 'media_type')
      }
    }
    done()
  })
  // After the Origin/Host check: an Origin that reaches it is allowed.
  registerCors(app, route.location)

  registerPost(app, http)
  registerStream(app, http)

  // Anything else on the MCP path is a method the endpoint does not allow, not a missing route.
  app.route({
    method: ['PUT', 'PATCH'],
    url: route.location,
    handler: async (_request, reply) => replyError(reply, new EdgeError('MCP_EDGE_METHOD_NOT_ALLOWED')),
  })

  app.delete(route.location, async (request, reply) => {
    if (http.sessionlessMethodNotAllowed(request, reply)) return reply
    if (await http.overLimit(request, reply)) return reply
    const record = await http.sessionFor(request, reply, null)
    if (record === undefined) return reply
    await endpoint.deleteSession(record.id)
    for (const [key, channel] of http.openStreams) {
      if (key.startsWith(`${record.id} `)) void channel.finish()
    }
    logger.info({ sessionId: record.id, principal: record.principal, method: 'DELETE', status: 200 }, 'session deleted')
    return reply.code(200).send()
  })
  return { http, policy }
}
