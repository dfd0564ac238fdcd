/**
 * Who is calling. The access phase (edge/auth: JWT, API key or the route's access module) learns it
 * once per HTTP request or WebSocket upgrade; everything after it reads it and nothing re-derives it:
 * session admission (a session belongs to one principal), rate limits and quotas (keyed by principal,
 * or by address on an open route), per-component scopes, logs (the principal, never a credential).
 *
 *   client ─► Host/Origin ─► access phase ─► Caller ─► rate limit ─► admit session ─► dispatch (scopes)
 */

/** What the edge knows about the caller of one request. Immutable once made. */
export interface Caller {
  /** The token subject, the API key's owner or what the access module returned; undefined on an open route. */
  readonly principal: string | undefined
  /** Scopes granted to the caller; undefined on an open route, where every component is usable. */
  readonly scopes: ReadonlySet<string> | undefined
  /** The client's address (Fastify's `request.ip`; `stdio` for the stdio transport). */
  readonly address: string
}

/** The caller of a request on a route without access control. */
export function openCaller(address: string): Caller {
  return { principal: undefined, scopes: undefined, address }
}

/** The key quotas count under: the principal when there is one, else the client's address. */
export function quotaKey(caller: Caller): string {
  return caller.principal !== undefined ? `p:${caller.principal}` : `a:${caller.address}`
}
