/**
 * Where an upstream's tokens come from, as the MCP authorization spec has a client find out:
 *
 *   401 + WWW-Authenticate: Bearer resource_metadata="…", scope="…"
 *     └─► protected resource metadata (RFC 9728; the header's URL, else the well-known URLs of the
 *         upstream's path and of its root) ─► `resource`, `authorization_servers[0]`
 *           └─► authorization server metadata (RFC 8414 `oauth-authorization-server`, then OpenID
 *               `openid-configuration`, path-inserted then path-appended) ─► endpoints, S256 support
 *
 * The result is public data, the same for every user: each worker keeps it for `DISCOVERY_TTL_MS`.
 */
import { AuthServerError, exchangeJson, stringMember } from './auth-server-http.ts'

/** How long one worker keeps an upstream's discovered metadata. */
export const DISCOVERY_TTL_MS = 60 * 60 * 1000

export interface BearerChallenge {
  readonly resourceMetadata?: string
  readonly scope?: string
  readonly error?: string
}

export interface AuthServerMetadata {
  readonly issuer: string
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  readonly registrationEndpoint?: string
  readonly revocationEndpoint?: string
  readonly scopesSupported?: readonly string[]
}

export interface Discovered {
  /** The resource indicator (RFC 8707) tokens are asked for: the metadata's `resource`. */
  readonly resource: string
  /** Scopes to ask for when neither config nor challenge names any. */
  readonly scopesSupported?: readonly string[]
  readonly server: AuthServerMetadata
  /** The protected resource metadata URL read (another worker finishing a consent reads the same). */
  readonly resourceMetadata: string
  readonly at: number
}

/** The Bearer challenge's parameters from a WWW-Authenticate header (other schemes ignored). */
export function parseBearerChallenge(header: string | undefined): BearerChallenge | undefined {
  if (header === undefined) return undefined
  const match = /(?:^|,\s*)Bearer(?:\s+|$)(.*)$/i.exec(header)
  if (match === null) return undefined
  const params: Record<string, string> = {}
  const pattern = /([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/g
  for (let found = pattern.exec(match[1]!); found !== null; found = pattern.exec(match[1]!)) {
    const name = found[1]!.toLowerCase()
    if (!(name in params)) params[name] = found[2] !== undefined ? found[2].replace(/\\(.)/g, '$1') : found[3]!
  }
  const challenge: { resourceMetadata?: string; scope?: string; error?: string } = {}
  if (params.resource_metadata !== undefined) challenge.resourceMetadata = params.resource_metadata
  if (params.scope !== undefined) challenge.scope = params.scope
  if (params.error !== undefined) challenge.error = params.error
  return challenge
}

/** The well-known URLs of `base` for `suffix`, path-inserted first (RFC 8414 §3, RFC 9728 §3), then the root's. */
function wellKnown(base: URL, suffix: string): string[] {
  const path = base.pathname === '/' ? '' : base.pathname.replace(/\/$/, '')
  const urls = [`${base.origin}/.well-known/${suffix}${path}`]
  if (path !== '') urls.push(`${base.origin}/.well-known/${suffix}`)
  return urls
}

/** An https URL, or http on loopback (tests, local development); anything else is refused. */
function checkedUrl(value: string | undefined, what: string): string {
  if (value === undefined) throw new AuthServerError('garbage', `${what} is missing`)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new AuthServerError('garbage', `${what} is not a URL`)
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]'
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) throw new AuthServerError('garbage', `${what} must be https`)
  return url.href
}

async function firstJson(what: string, urls: readonly string[], timeoutMs: number): Promise<{ url: string; body: Record<string, unknown> }> {
  let last: unknown
  for (const url of urls) {
    try {
      return { url, body: (await exchangeJson(what, url, { method: 'GET' }, timeoutMs)).body }
    } catch (error) {
      // A server that is down or slow is so for every well-known URL: no point asking the next.
      if (error instanceof AuthServerError && (error.failure === 'unreachable' || error.failure === 'timeout')) throw error
      last = error
    }
  }
  throw last instanceof AuthServerError ? last : new AuthServerError('garbage', `${what}: not found`)
}

/** Reads the protected resource metadata of `upstreamUrl`, then its authorization server's metadata. */
export async function discover(upstreamUrl: string, challenge: BearerChallenge | undefined, timeoutMs: number): Promise<Discovered> {
  const upstream = new URL(upstreamUrl)
  const prmUrls = challenge?.resourceMetadata !== undefined
    ? [checkedUrl(challenge.resourceMetadata, 'the resource_metadata URL')]
    : wellKnown(upstream, 'oauth-protected-resource')
  let read: { url: string; body: Record<string, unknown> }
  try {
    read = await firstJson('protected resource metadata', prmUrls, timeoutMs)
  } catch (error) {
    throw new AuthServerError('missing', error instanceof AuthServerError ? error.message : 'protected resource metadata: not found')
  }
  const { url: prmUrl, body: prm } = read
  const servers = prm.authorization_servers
  if (!Array.isArray(servers) || typeof servers[0] !== 'string') throw new AuthServerError('garbage', 'protected resource metadata: no authorization_servers')
  const issuer = checkedUrl(servers[0], 'the authorization server')
  const resource = stringMember(prm, 'resource') ?? `${upstream.origin}${upstream.pathname}`
  const issuerUrl = new URL(issuer)
  const asUrls = [...wellKnown(issuerUrl, 'oauth-authorization-server'), ...wellKnown(issuerUrl, 'openid-configuration')]
  if (issuerUrl.pathname !== '/') asUrls.push(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`)
  const { body: meta } = await firstJson('authorization server metadata', asUrls, timeoutMs)
  const methods = meta.code_challenge_methods_supported
  // MCP authorization: a client MUST refuse an authorization server that does not advertise S256.
  if (!Array.isArray(methods) || !methods.includes('S256')) throw new AuthServerError('garbage', 'authorization server metadata: PKCE S256 is not supported')
  const server: { -readonly [K in keyof AuthServerMetadata]: AuthServerMetadata[K] } = {
    issuer: stringMember(meta, 'issuer') ?? issuer,
    authorizationEndpoint: checkedUrl(stringMember(meta, 'authorization_endpoint'), 'authorization_endpoint'),
    tokenEndpoint: checkedUrl(stringMember(meta, 'token_endpoint'), 'token_endpoint'),
  }
  const registration = stringMember(meta, 'registration_endpoint')
  if (registration !== undefined) server.registrationEndpoint = checkedUrl(registration, 'registration_endpoint')
  const revocation = stringMember(meta, 'revocation_endpoint')
  if (revocation !== undefined) server.revocationEndpoint = checkedUrl(revocation, 'revocation_endpoint')
  const scopes = strings(meta.scopes_supported)
  if (scopes !== undefined) server.scopesSupported = scopes
  const discovered: { -readonly [K in keyof Discovered]: Discovered[K] } = { resource, server, resourceMetadata: prmUrl, at: Date.now() }
  const resourceScopes = strings(prm.scopes_supported)
  if (resourceScopes !== undefined) discovered.scopesSupported = resourceScopes
  return discovered
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value as string[] : undefined
}
