/**
 * CORS for browsers on a route's MCP path: a web app on an allowed origin (the route's
 * `allowed_origins`, and loopback, exactly as the Origin check allows them) may preflight, POST,
 * GET and DELETE, and read `Mcp-Session-Id` from the answers. An origin that is not allowed gets no
 * CORS header at all: the Origin check has already refused it with 403.
 *
 *   OPTIONS + Origin ─► Origin/Host check (403, no CORS) ─► 204 Allow-Origin, -Methods, -Headers, Max-Age
 *   POST/GET/DELETE + Origin ─► … ─► the answer, with Allow-Origin and Expose-Headers
 *   no Origin (every non-browser client) ─► nothing to do
 */
import type { ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** The methods of the MCP path. */
const ALLOW_METHODS = 'GET, POST, DELETE'
/** Request headers MCP clients send: the 2025 set, bearer tokens, and the 2026-07-28 routing headers. */
const ALLOW_HEADERS = ['content-type', 'accept', 'authorization', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'mcp-method', 'mcp-name']
const ALLOWED = new Set(ALLOW_HEADERS)
/** `x-mcp-header` tool parameters travel as `Mcp-Param-<Name>` (2026-07-28): any such name is allowed. */
const PARAM_HEADER = /^mcp-param-[a-z0-9-]+$/
/** Response headers a script may read besides the safelisted ones. */
const EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After'
/** Seconds a browser may reuse a preflight answer (browsers cap it at 2 h or less). */
const MAX_AGE = '600'

/**
 * Adds CORS to the MCP path of a route scope. Call it after the Origin/Host hook of that scope: its
 * hook trusts that an Origin reaching it is allowed.
 */
export function registerCors(app: FastifyInstance, location: string): void {
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin
    if (origin !== undefined) addCorsHeaders(reply.raw, origin, request.method)
    done()
  })
  app.options(location, preflight)
}

/**
 * The CORS headers of an answer to an allowed `origin`, on the raw response: answers written straight
 * to the socket (JSON, SSE, the hot path of transport/hot-post.ts) merge them too.
 */
export function addCorsHeaders(raw: ServerResponse, origin: string, method: string): void {
  raw.setHeader('access-control-allow-origin', origin)
  raw.setHeader('vary', 'Origin')
  if (method !== 'OPTIONS') raw.setHeader('access-control-expose-headers', EXPOSE_HEADERS)
}

/** The preflight answer (or, without an Origin, a plain OPTIONS answer naming the methods). */
export function preflight(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('allow', ALLOW_METHODS)
  if (request.headers.origin !== undefined) {
    reply.header('access-control-allow-methods', ALLOW_METHODS)
    reply.header('access-control-allow-headers', allowHeaders(request.headers['access-control-request-headers']))
    reply.header('access-control-max-age', MAX_AGE)
  }
  void reply.code(204).send()
}

/** The headers a preflight asked for when MCP uses them all (with any Mcp-Param-*), else the MCP set. */
function allowHeaders(requested: string | undefined): string {
  if (requested === undefined) return ALLOW_HEADERS.join(', ')
  const names = requested.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')
  const extra = names.filter((name) => !ALLOWED.has(name) && PARAM_HEADER.test(name))
  return [...ALLOW_HEADERS, ...extra].join(', ')
}
