/**
 * The access phase on Fastify: every request of a protected route gets its `Caller` (or a 401/403/503
 * with a Bearer challenge) before the transport sees it; open routes get theirs lazily from `callerOf`.
 *
 *   onRequest (after Host/Origin): credential ─► identity ─┬─ POST with an access module ──► preHandler
 *                                                          └─ otherwise: decide ─► request.caller
 *   preHandler (POST, body parsed once by Fastify): access module (method, tool) ─► request.caller
 *                                                   ─► the component's scopes (tools/call …) ─► 403?
 *
 * Callback hooks, not async ones: a token seen before is checked without a promise.
 */
import { accessDecision, refusedCall, refusedUnread } from '../events/refused-call.ts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { calledTool } from '../wire/called-tool.ts'
import { EdgeError } from '../wire/errors.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { replyError } from '../transport/reply-error.ts'
import { openCaller, type Caller } from './caller.ts'
import type { Identity } from './jwt-verifier.ts'
import { isRefusal, type Refusal, type RouteAccess, type RequestFacts } from './route-access.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the access phase of a protected route; read it through `callerOf`. */
    caller: Caller | null
    /** The identity found in onRequest, waiting for the access module in preHandler. */
    accessIdentity: Identity | null
  }
}

/** Where protected resource metadata lives (RFC 9728 §3.1): the well-known prefix, then the resource's path. */
export const METADATA_PREFIX = '/.well-known/oauth-protected-resource'

/** Adds the request fields once per app (Fastify wants request decorations declared before use). */
export function decorateCaller(app: FastifyInstance): void {
  app.decorateRequest('caller', null)
  app.decorateRequest('accessIdentity', null)
}

/** The request's caller: set by the access phase on a protected route, else an open caller for its address. */
export function callerOf(request: FastifyRequest): Caller {
  return (request.caller ??= openCaller(request.ip))
}

/** The URL of a route's protected resource metadata, as reachable through the host the client used. */
export function metadataUrl(request: FastifyRequest, location: string): string {
  return `${request.protocol}://${request.host}${METADATA_PREFIX}${location === '/' ? '' : location}`
}

/** Answers a refusal: its status from the error table, the Bearer challenge, a JSON-RPC error body. */
export function replyRefusal(reply: FastifyReply, access: RouteAccess, refused: Refusal, id: string | number | null = null): FastifyReply {
  return replyError(reply, refusalError(access, refused, metadataUrl(reply.request, access.location)), id)
}

/** A refusal of the access phase as the error table's row, with its Bearer challenge naming `metadata`. */
export function refusalError(access: RouteAccess, refused: Refusal, metadata: string): EdgeError {
  const challenge = access.challenge(refused, metadata)
  const headers: Record<string, string> | undefined = challenge === undefined ? undefined : { 'www-authenticate': challenge }
  if (refused.retryAfter !== undefined) return new EdgeError(refused.code, refused.message, { headers: { ...headers, 'retry-after': refused.retryAfter }, status: refused.status })
  // The status is the row's, except an access module's own 4xx denial.
  return new EdgeError(refused.code, refused.message, { headers, status: refused.status })
}

export function rpcFacts(body: unknown, search = false): { method: string | undefined; tool: string | undefined; params: JsonObject | undefined; id: string | number | null } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { method: undefined, tool: undefined, params: undefined, id: null }
  const message = body as { method?: unknown; params?: unknown; id?: unknown }
  const method = typeof message.method === 'string' ? message.method : undefined
  const params = typeof message.params === 'object' && message.params !== null ? (message.params as JsonObject) : undefined
  const named = method === 'tools/call' ? calledTool(params, search) : params?.name ?? params?.uri
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null
  return { method, tool: typeof named === 'string' ? named : undefined, params, id }
}

/**
 * Installs the access phase on a route's scope; register it after the route's Host/Origin hook, so a
 * forbidden origin is refused first.
 */
export function registerAccess(app: FastifyInstance, endpoint: McpEndpoint, access: RouteAccess): void {
  const componentScopes = endpoint.scopes
  const search = endpoint.route.catalogue === 'search'
  const logger = endpoint.logger

  function facts(request: FastifyRequest, method: string | undefined, tool: string | undefined): RequestFacts {
    return { httpMethod: request.method, method, tool, headers: request.headers, address: request.ip, transport: request.ws ? 'websocket' : (request.routeOptions.config as { transport?: 'sse' } | undefined)?.transport ?? 'streamable_http' }
  }

  function conclude(request: FastifyRequest, reply: FastifyReply, verdict: Caller | Refusal, id: string | number | null, done: () => void): void {
    if (isRefusal(verdict)) {
      logger.info({ principal: request.accessIdentity?.principal, status: verdict.status, reason: verdict.message, method: request.method }, 'access refused')
      if (endpoint.calls?.subscribed === true) {
        const { method, params } = rpcFacts(request.body)
        // Refused from its headers (the credential, or an access decision that needs no body): no method to name.
        if (method === undefined) refusedUnread(endpoint.calls, request.headers, accessDecision(verdict), verdict.message, request.accessIdentity?.principal)
        else refusedCall(endpoint.calls, method, params, header(request, 'mcp-session-id'), undefined, accessDecision(verdict), verdict.message)
      }
      replyRefusal(reply, access, verdict, id)
      return
    }
    request.caller = verdict
    if (request.method === 'POST' && componentScopes !== undefined) {
      const { method, params } = rpcFacts(request.body)
      const refused = access.checkComponent(componentScopes, endpoint.registry, verdict, method, params)
      if (refused !== undefined) {
        logger.info({ principal: verdict.principal, status: refused.status, reason: refused.message }, 'access refused')
        refusedCall(endpoint.calls, method, params, header(request, 'mcp-session-id'), verdict, accessDecision(refused), refused.message)
        replyRefusal(reply, access, refused, id)
        return
      }
    }
    done()
  }

  // POSTs wait for their body when the module needs the method and tool, or components need scopes.
  const decideAfterBody = access.hasModule || componentScopes !== undefined

  app.addHook('onRequest', (request, reply, done) => {
    // A browser never sends credentials on a CORS preflight, and its answer (edge/cors.ts) holds no
    // data: refusing it would keep every web client from making the real, authenticated request.
    if (request.method === 'OPTIONS') return done()
    const found = access.identify(request.headers)
    const next = (identity: Identity | null | Refusal): void => {
      if (isRefusal(identity)) return conclude(request, reply, identity, null, done)
      request.accessIdentity = identity
      if (decideAfterBody && request.method === 'POST') return done()
      const verdict = access.decide(identity, facts(request, undefined, undefined))
      if (verdict instanceof Promise) void verdict.then((settled) => conclude(request, reply, settled, null, done))
      else conclude(request, reply, verdict, null, done)
    }
    if (found instanceof Promise) void found.then(next)
    else next(found)
  })

  if (!decideAfterBody) return
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST') return done()
    const { method, tool, id } = rpcFacts(request.body, search)
    const verdict = access.decide(request.accessIdentity, facts(request, method, tool))
    if (verdict instanceof Promise) void verdict.then((settled) => conclude(request, reply, settled, id, done))
    else conclude(request, reply, verdict, id, done)
  })
}

/**
 * Serves each protected route's metadata at `/.well-known/oauth-protected-resource<location>`, and at
 * the bare well-known path too when one route is protected (clients fall back to it). Public and
 * cacheable: it names no secret.
 */
export function registerProtectedResourceMetadata(app: FastifyInstance, routes: ReadonlyMap<string, RouteAccess>): void {
  const serve = (access: RouteAccess) => async (request: FastifyRequest, reply: FastifyReply) =>
    reply
      .header('cache-control', 'public, max-age=300')
      .header('access-control-allow-origin', '*')
      .send(access.metadata(`${request.protocol}://${request.host}${access.location}`))
  for (const [location, access] of routes) {
    if (location !== '/') serveAt(app, `${METADATA_PREFIX}${location}`, serve(access))
  }
  const only = routes.size === 1 ? [...routes.values()][0] : routes.get('/')
  if (only !== undefined) serveAt(app, METADATA_PREFIX, serve(only))
}

/** Request headers a page's metadata fetch may carry: the SDK's discovery sends MCP-Protocol-Version. */
const METADATA_REQUEST_HEADERS = 'mcp-protocol-version'

/** GET of a metadata document, and the answer to a browser's preflight of it (any origin may read it). */
function serveAt(app: FastifyInstance, url: string, handler: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>): void {
  app.get(url, handler)
  app.options(url, async (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-origin', '*')
      .header('access-control-allow-methods', 'GET')
      .header('access-control-allow-headers', METADATA_REQUEST_HEADERS)
      .header('access-control-max-age', '600')
      .send(),
  )
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}
