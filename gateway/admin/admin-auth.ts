/**
 * Who may use the admin listener. On loopback with no credential configured: anyone on this host,
 * and only through a loopback Host and Origin (a page of another site cannot reach it after DNS
 * rebinding). With `admin.token` and/or `admin.jwt`: a bearer token, the configured one or a JWT
 * that carries `admin.jwt.scope`; the config refuses a listener beyond loopback without one.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { AdminConfig } from '../config/types.ts'
import { JwtVerifier } from '../edge/jwt-verifier.ts'
import { OriginPolicy } from '../edge/origin-check.ts'
import { EdgeError } from '../wire/errors.ts'

export class AdminAuth {
  readonly #token: Buffer | undefined
  readonly #jwt: JwtVerifier | undefined
  readonly #scope: string | undefined
  readonly #policy = new OriginPolicy([])

  constructor(config: AdminConfig) {
    this.#token = config.token === undefined ? undefined : digest(config.token)
    if (config.jwt !== undefined) {
      this.#scope = config.jwt.scope
      this.#jwt = new JwtVerifier({
        issuer: config.jwt.issuer,
        jwks_uri: config.jwt.jwks_uri,
        audience: config.jwt.audience,
        algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
        clock_tolerance: 30,
        principal_claim: 'sub',
        jwks_cache: 600,
        jwks_cooldown: 30,
        token_cache: 100,
      })
    }
  }

  /** True when a credential is asked for. */
  get guarded(): boolean {
    return this.#token !== undefined || this.#jwt !== undefined
  }

  /** Resolves when the request may proceed; rejects with the error table's refusal. */
  async check(headers: Readonly<Record<string, string | string[] | undefined>>): Promise<void> {
    if (!this.guarded) {
      const origin = headers.origin
      if (!this.#policy.allows(headers.host as string | undefined, Array.isArray(origin) ? origin[0] : origin)) throw new EdgeError('MCP_EDGE_FORBIDDEN_ORIGIN')
      return
    }
    const header = headers.authorization
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null
    if (match === null) throw new EdgeError('MCP_EDGE_ADMIN_UNAUTHORIZED')
    const presented = match[1]!
    if (this.#token !== undefined && timingSafeEqual(digest(presented), this.#token)) return
    if (this.#jwt !== undefined) {
      let scopes: ReadonlySet<string>
      try {
        scopes = (await this.#jwt.verify(presented)).scopes
      } catch {
        throw new EdgeError('MCP_EDGE_ADMIN_UNAUTHORIZED')
      }
      if (scopes.has(this.#scope!)) return
      throw new EdgeError('MCP_EDGE_INSUFFICIENT_SCOPE', `Forbidden: the admin API needs the scope ${this.#scope}`)
    }
    throw new EdgeError('MCP_EDGE_ADMIN_UNAUTHORIZED')
  }
}

/** Compared as digests: equal lengths for timingSafeEqual, and no early exit on the token's length. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest()
}
