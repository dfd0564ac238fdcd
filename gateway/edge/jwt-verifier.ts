/**
 * Verifies OAuth access tokens that are JWTs (RFC 9068) for one route, with jose:
 *
 *   token ─► verified-token cache? ─hit─► Identity (one map lookup, until the token expires)
 *              │ miss
 *              ▼
 *   jwtVerify: signature with a key from the JWKS (jwks-keys.ts: fetched once, refreshed after
 *   `jwks_cache` s, at most one fetch per `jwks_cooldown` s; the keys in hand keep verifying while the
 *   provider is down, and a key that cannot be had is a 503 with Retry-After), alg in `algorithms`
 *   (asymmetric only: `none` and HMAC with a public key are never tried), iss, aud, exp (required),
 *   nbf, ± clock_tolerance
 *              │
 *              ▼
 *   principal = claims[principal_claim]; scopes from `scope` (space-separated) or `scp` (array)
 *
 * Without `jwks_uri` the JWKS location is discovered from the issuer's metadata: RFC 8414 first, then
 * OpenID Connect discovery; the document must name the same issuer.
 */
import type { errors, JWTPayload } from 'jose'
import type { JwtConfig } from '../config/types.ts'
import { keepSubjectToken, type VerifiedToken } from '../wire/caller.ts'
import { EdgeError } from '../wire/errors.ts'
import { jose } from './jose-module.ts'
import { JwksKeys, keysUnavailable } from './jwks-keys.ts'

/** Who a verified token speaks for. Shared between requests carrying the same token: never mutate. */
export interface Identity {
  readonly principal: string
  readonly scopes: ReadonlySet<string>
  /** The token's claims (and, beside them, the raw token for an upstream token exchange). */
  readonly token?: VerifiedToken
}

/** The token was not accepted; `message` is safe to send (it never quotes the token). */
export class InvalidTokenError extends EdgeError {
  constructor(message: string) {
    super('MCP_EDGE_UNAUTHORIZED', message)
    this.name = 'InvalidTokenError'
  }
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])
const METADATA_TIMEOUT_MS = 5000
/** After a failed discovery, the next request tries again no sooner than this. */
const DISCOVERY_RETRY_MS = 5000

/** `http://` is for a development issuer on this machine only; anything else must be https. */
export function checkTransportSecurity(what: string, url: string): void {
  const parsed = new URL(url)
  if (parsed.protocol === 'https:') return
  if (parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname)) return
  throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `${what} ${url} must use https:// (http:// is accepted on loopback only)`)
}

/** The scopes a token grants: RFC 9068 `scope` (space-separated), or `scp` (an array, or a string). */
export function scopesOf(claims: JWTPayload): Set<string> {
  const scopes = new Set<string>()
  const add = (value: unknown): void => {
    if (typeof value === 'string') for (const scope of value.split(' ')) if (scope !== '') scopes.add(scope)
  }
  add(claims.scope)
  const scp = claims.scp
  if (Array.isArray(scp)) for (const scope of scp) add(scope)
  else add(scp)
  return scopes
}

interface Cached {
  readonly identity: Identity
  /** Milliseconds since the epoch after which the token is verified again (its exp). */
  readonly until: number
}

export class JwtVerifier {
  readonly #config: JwtConfig
  readonly #cache = new Map<string, Cached>()
  #keys: JwksKeys | undefined
  #discovering: Promise<JwksKeys> | undefined

  constructor(config: JwtConfig) {
    checkTransportSecurity('auth.jwt.issuer', config.issuer)
    if (config.jwks_uri !== undefined) checkTransportSecurity('auth.jwt.jwks_uri', config.jwks_uri)
    this.#config = config
    if (config.jwks_uri !== undefined) this.#keys = this.#remoteKeys(config.jwks_uri)
  }

  /** Fetches the keys now (discovering where they are first, if needed), so the first request does not wait. */
  async warm(): Promise<void> {
    const keys = this.#keys ?? (await this.#discover())
    await keys.refresh()
  }

  /** JWKS fetches so far (tests read it). */
  get jwksFetches(): number {
    return this.#keys?.fetches ?? 0
  }

  /**
   * The identity of a valid token. Synchronous for a token verified before and not yet expired (the
   * hot path); a promise otherwise. Throws (or rejects with) InvalidTokenError for a bad token, and
   * EdgeError MCP_EDGE_AUTH_UNAVAILABLE when the keys cannot be fetched.
   */
  verify(token: string): Identity | Promise<Identity> {
    const cached = this.#cache.get(token)
    if (cached !== undefined) {
      if (cached.until > Date.now()) return cached.identity
      this.#cache.delete(token)
    }
    return this.#verify(token)
  }

  async #verify(token: string): Promise<Identity> {
    const config = this.#config
    const keys = this.#keys ?? (await this.#discover())
    const { jwtVerify, errors } = await jose()
    let claims: JWTPayload
    try {
      ;({ payload: claims } = await jwtVerify(token, keys.getKey, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: config.algorithms,
        clockTolerance: config.clock_tolerance,
        requiredClaims: ['exp'],
      }))
    } catch (error) {
      throw rejection(error, errors)
    }
    const principal = claims[config.principal_claim]
    if (typeof principal !== 'string' || principal === '') {
      throw new InvalidTokenError(`The token has no ${config.principal_claim} claim naming its principal`)
    }
    const verified: VerifiedToken = { claims: claims as Record<string, unknown>, expiresAt: (claims.exp as number) * 1000 }
    keepSubjectToken(verified, token)
    const identity: Identity = { principal, scopes: scopesOf(claims), token: verified }
    this.#remember(token, identity, (claims.exp as number) * 1000)
    return identity
  }

  #remember(token: string, identity: Identity, expiresAt: number): void {
    const limit = this.#config.token_cache
    if (limit === 0) return
    // Bounded: when full, the oldest entry goes (Map keeps insertion order).
    if (this.#cache.size >= limit) this.#cache.delete(this.#cache.keys().next().value as string)
    this.#cache.set(token, { identity, until: expiresAt + this.#config.clock_tolerance * 1000 })
  }

  #remoteKeys(url: string): JwksKeys {
    return new JwksKeys(url, { cacheMs: this.#config.jwks_cache * 1000, cooldownMs: this.#config.jwks_cooldown * 1000, timeoutMs: METADATA_TIMEOUT_MS })
  }

  /** Finds the JWKS through the issuer's metadata, once; a failure is retried by a later request. */
  #discover(): Promise<JwksKeys> {
    this.#discovering ??= discoverJwksUri(this.#config.issuer).then(
      (uri) => (this.#keys = this.#remoteKeys(uri)),
      (error: unknown) => {
        setTimeout(() => (this.#discovering = undefined), DISCOVERY_RETRY_MS).unref()
        throw keysUnavailable(`cannot discover the JWKS of ${this.#config.issuer}: ${(error as Error).message}`, DISCOVERY_RETRY_MS)
      },
    )
    return this.#discovering
  }
}

/** The URLs where an issuer's metadata may be: RFC 8414 (path inserted after the well-known prefix), then OpenID Connect. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer)
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '')
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ]
}

async function discoverJwksUri(issuer: string): Promise<string> {
  const problems: string[] = []
  for (const url of metadataUrls(issuer)) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(METADATA_TIMEOUT_MS), redirect: 'error' })
      if (!response.ok) {
        problems.push(`${url}: HTTP ${response.status}`)
        continue
      }
      const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown }
      if (metadata.issuer !== issuer) throw new Error(`${url} names issuer ${String(metadata.issuer)}`)
      if (typeof metadata.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`)
      checkTransportSecurity('jwks_uri', metadata.jwks_uri)
      return metadata.jwks_uri
    } catch (error) {
      problems.push((error as Error).message)
    }
  }
  throw new Error(problems.join('; '))
}

/** What the client is told about a token that failed; the detail stays generic where it could help an attacker. */
function rejection(error: unknown, joseErrors: typeof errors): EdgeError {
  // The key set's own verdict (the keys cannot be had now), with its Retry-After.
  if (error instanceof EdgeError) return error
  if (error instanceof joseErrors.JWTExpired) return new InvalidTokenError('The access token expired')
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        return new InvalidTokenError('The access token is not valid yet')
      case 'iss':
        return new InvalidTokenError('The access token comes from another issuer')
      case 'aud':
        return new InvalidTokenError('The access token is for another resource (audience)')
      default:
        return new InvalidTokenError(`The access token's ${error.claim} claim is invalid`)
    }
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return new InvalidTokenError('The access token is signed with an algorithm this resource does not accept')
  if (error instanceof joseErrors.JWKSNoMatchingKey) return new InvalidTokenError('The access token is signed with an unknown key')
  return new InvalidTokenError('The access token is invalid')
}
