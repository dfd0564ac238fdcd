/**
 * The access phase a team writes in TypeScript, like OpenResty's `access_by_lua`: a route's
 * `auth.access` module is loaded like a handler and called before dispatch, once per HTTP request
 * (and once per WebSocket upgrade), after the gateway's own JWT or API key check. It may let the
 * request through as someone (its own identity system), refuse it, or add scopes.
 *
 *   export default defineAccess((request) => {
 *     if (request.address.startsWith('10.')) return { addScopes: ['internal'] }
 *     const team = request.headers['x-team']
 *     if (team === 'ops') return { allow: true, principal: 'team:ops', scopes: ['mcp', 'deploy'] }
 *     if (request.tool === 'deploy' && request.principal === undefined) return { deny: true, status: 403, message: 'deploys need a login' }
 *   })
 *
 * Returning nothing keeps what the gateway found. A throw or a rejection is never a 500: the request
 * gets 403 naming a reference, and the error is logged under that reference.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { loadDefaultExport } from '../server/load-module.ts'
import { EdgeError } from '../wire/errors.ts'

/** What the access module learns about a request. Read-only; reading it costs nothing extra. */
export interface AccessRequest {
  /** The route's location. */
  readonly route: string
  /** `POST`, `GET` or `DELETE`; `GET` for a WebSocket upgrade. */
  readonly httpMethod: string
  /** The JSON-RPC method of a POST (`tools/call`); undefined for GET, DELETE, an upgrade, a response. */
  readonly method: string | undefined
  /** The tool a `tools/call` names (the prompt of `prompts/get`, the URI of `resources/read`). */
  readonly tool: string | undefined
  /** The request's headers, as received (names in lower case). Never log `authorization`. */
  readonly headers: IncomingHttpHeaders
  /** The client's address (behind a proxy: what Fastify's trustProxy makes of X-Forwarded-For). */
  readonly address: string
  /** What the gateway's JWT or API key check found; undefined when the request carried neither. */
  readonly principal: string | undefined
  readonly scopes: ReadonlySet<string>
  /** `streamable_http`, `websocket`, or `sse` (the HTTP+SSE transport of 2024-11-05: its stream and its POSTs). */
  readonly transport: 'streamable_http' | 'websocket' | 'sse'
}

/** Let the request through as `principal` (default: what the gateway found) with `scopes` (default: likewise). */
export interface AllowDecision {
  readonly allow: true
  readonly principal?: string
  readonly scopes?: readonly string[]
}
/** Refuse the request with a 4xx `status` (default 403) and a message the client sees. */
export interface DenyDecision {
  readonly deny: true
  readonly status?: number
  readonly message: string
}
/** Keep the gateway's verdict and grant these scopes besides. */
export interface AddScopesDecision {
  readonly addScopes: readonly string[]
}
export type AccessDecision = AllowDecision | DenyDecision | AddScopesDecision | undefined | void

export type AccessFunction = (request: AccessRequest) => AccessDecision | Promise<AccessDecision>

const ACCESS = Symbol.for('mcp-edge.access')

/** An access module's default export. */
export interface AccessModule {
  readonly [ACCESS]: true
  readonly decide: AccessFunction
}

/** Wraps an access module's function; the gateway calls it before every request of the route. */
export function defineAccess(decide: AccessFunction): AccessModule {
  return { [ACCESS]: true, decide }
}

function isAccessModule(value: unknown): value is AccessModule {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ACCESS] === true
}

/** Loads an access module (TypeScript through tsx, like handlers); its default export is `defineAccess(...)` or a plain function. */
export async function loadAccessModule(file: string): Promise<AccessFunction> {
  const exported = await loadDefaultExport(file, 'access module', 'MCP_EDGE_HANDLER_INVALID')
  if (isAccessModule(exported)) return exported.decide
  if (typeof exported === 'function') return exported as AccessFunction
  throw new EdgeError('MCP_EDGE_HANDLER_INVALID', `${file}: write \`export default defineAccess((request) => { ... })\``)
}
