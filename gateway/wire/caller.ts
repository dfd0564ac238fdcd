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
  /**
   * The verified access token's claims when the caller came with a JWT (not an API key, not an access
   * module that renamed the principal): what identity assertions and token exchange toward upstreams
   * speak for. The token itself is not here (see `subjectToken`).
   */
  readonly token?: VerifiedToken
}

/** What the edge verified of a caller's JWT. Shared between the requests that carry the same token: never mutate. */
export interface VerifiedToken {
  readonly claims: Readonly<Record<string, unknown>>
  /** Milliseconds since the epoch when the token expires. */
  readonly expiresAt: number
}

/**
 * The raw tokens of verified JWTs, by their VerifiedToken. Kept beside the Caller rather than on it, so
 * that no log line, serialisation or handler that reads `ctx.caller` ever sees one: the only reader is
 * the token exchange toward an upstream (RFC 8693's subject_token), which never sends it to an upstream.
 */
const rawTokens = new WeakMap<VerifiedToken, string>()

/** Records `token` as the raw form of `verified` (the JWT verifier, once per token). */
export function keepSubjectToken(verified: VerifiedToken, token: string): void {
  rawTokens.set(verified, token)
}

/** The caller's raw access token, for a token exchange only; undefined without a verified JWT. */
export function subjectToken(caller: Caller | undefined): string | undefined {
  return caller?.token === undefined ? undefined : rawTokens.get(caller.token)
}

/** The caller of a request on a route without access control. */
export function openCaller(address: string): Caller {
  return { principal: undefined, scopes: undefined, address }
}

/** The key quotas count under: the principal when there is one, else the client's address (an IPv6 one by its /64). */
export function quotaKey(caller: Caller): string {
  return caller.principal !== undefined ? `p:${caller.principal}` : `a:${addressKey(caller.address)}`
}

/**
 * The client an address stands for, for per-address bounds: an IPv4 address as it is (also when
 * IPv4-mapped, `::ffff:a.b.c.d`), an IPv6 address by its /64 prefix, since one host is given a whole
 * /64 and could otherwise pose as any number of clients.
 */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address
  const bare = address.split('%')[0]!.toLowerCase()
  if (bare.startsWith('::ffff:') && bare.includes('.')) return bare.slice(7)
  const [head = '', tail] = bare.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
