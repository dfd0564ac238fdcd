/**
 * `auth: {identity_assertion: {audience, ttl_s, claims}}`: for internal upstreams that trust the
 * gateway. Per caller, a short-lived JWT signed by the gateway (`upstream_identity`), verified by the
 * upstream against the gateway's JWKS:
 *
 *   { iss: upstream_identity.issuer, sub: the principal, aud, iat, nbf, exp: iat + ttl_s, jti,
 *     act: { sub: upstream_identity.issuer },           RFC 8693 §4.1: the gateway acts for the principal
 *     <each of `claims` the caller's verified token carries> }
 *
 * An assertion is reused until half its life is gone (the same headers object: nothing made per call),
 * then signed anew. Nothing of the caller's token but the chosen claims goes into it.
 */
import type { IdentityAssertionConfig, UpstreamConfig } from '../../config/types.ts'
import type { Caller, VerifiedToken } from '../../wire/caller.ts'
import { EdgeError } from '../../wire/errors.ts'
import { AssertionSigner } from './assertion-signer.ts'
import type { CredentialContext } from './context.ts'
import { CredentialError, type CredentialHeaders, type CredentialProvider, type Rejection } from './provider.ts'

interface Held {
  readonly headers: CredentialHeaders
  readonly refreshAt: number
}

/** Assertions kept for callers without a verified token (API keys), by principal. */
const MAX_BY_PRINCIPAL = 10_000
/** Claims the gateway sets itself: a `claims` entry naming one is refused at load. */
const RESERVED = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'act'])

/** The gateway's signer (one per gateway build, shared by its routes). */
export function signerOf(context: CredentialContext): AssertionSigner {
  let signer = context.extensions.get('identity') as AssertionSigner | undefined
  if (signer === undefined) {
    const config = context.settings.upstream_identity
    if (config === undefined) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', 'auth.identity_assertion needs upstream_identity (the gateway\'s signing keys)')
    signer = new AssertionSigner(config)
    context.extensions.set('identity', signer)
  }
  return signer
}

export class IdentityAssertion implements CredentialProvider {
  readonly kind = 'identity_assertion'
  readonly perPrincipal = true
  readonly #upstream: string
  readonly #config: IdentityAssertionConfig
  readonly #signer: AssertionSigner
  readonly #byToken = new WeakMap<VerifiedToken, Held>()
  readonly #byPrincipal = new Map<string, Held>()

  constructor(upstream: UpstreamConfig, context: CredentialContext) {
    const config = upstream.auth!.identity_assertion!
    const reserved = config.claims.find((claim) => RESERVED.has(claim))
    if (reserved !== undefined) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `upstream ${upstream.name}: auth.identity_assertion.claims cannot copy ${reserved} (the gateway sets it)`)
    this.#upstream = upstream.name
    this.#config = config
    this.#signer = signerOf(context)
  }

  headers(who: Caller | undefined): CredentialHeaders | Promise<CredentialHeaders> {
    const principal = who?.principal
    if (principal === undefined) return Promise.reject(new CredentialError(this.#upstream, 'no_principal', 'an identity assertion speaks for a caller; this call has none (an open route)'))
    const token = who!.token
    const held = token !== undefined ? this.#byToken.get(token) : this.#byPrincipal.get(principal)
    if (held !== undefined && Date.now() < held.refreshAt) return held.headers
    return this.#sign(principal, token)
  }

  /** An assertion is made fresh for each refusal: drop the held one; once more with a new one. */
  rejected(who: Caller | undefined): Rejection {
    if (who?.principal === undefined) return 'fail'
    if (who.token !== undefined) this.#byToken.delete(who.token)
    this.#byPrincipal.delete(who.principal)
    return 'retry'
  }

  close(): void {}

  async #sign(principal: string, token: VerifiedToken | undefined): Promise<CredentialHeaders> {
    const { audience, ttl_s: ttl, claims: chosen } = this.#config
    const claims: Record<string, unknown> = { act: { sub: this.#signer.issuer } }
    if (token !== undefined) for (const name of chosen) if (token.claims[name] !== undefined) claims[name] = token.claims[name]
    let jwt: string
    try {
      jwt = await this.#signer.sign(claims, principal, audience, ttl)
    } catch (error) {
      throw new CredentialError(this.#upstream, 'signing_failed', 'the gateway could not sign the identity assertion', { cause: error })
    }
    const held: Held = { headers: Object.freeze({ authorization: `Bearer ${jwt}` }), refreshAt: Date.now() + (ttl * 1000) / 2 }
    if (token !== undefined) this.#byToken.set(token, held)
    else {
      if (this.#byPrincipal.size >= MAX_BY_PRINCIPAL) this.#byPrincipal.delete(this.#byPrincipal.keys().next().value as string)
      this.#byPrincipal.set(principal, held)
    }
    return held.headers
  }
}
