/**
 * `auth: {token_exchange: {...}}`: RFC 8693. For each caller, the gateway trades the caller's verified
 * access token (the `subject_token`, read with `subjectToken(who)` and sent to the authorization server
 * only) for a token whose audience is the upstream. The upstream never sees the caller's token.
 *
 *   who ─► key (issuer, principal, the caller's scopes; memoised per verified token: no work per call)
 *        ─► TokenKeeper: held here? the shared store? else one exchange (single flight across hosts)
 *
 * Kept by (principal, upstream setting, scopes) until shortly before it expires, so one exchange serves
 * a principal's calls on every worker and host while it is valid.
 */
import { createHash } from 'node:crypto'
import type { TokenExchangeConfig, UpstreamConfig } from '../../config/types.ts'
import { subjectToken, type Caller, type VerifiedToken } from '../../wire/caller.ts'
import type { CredentialContext } from './context.ts'
import { CredentialError, type CredentialHeaders, type CredentialProvider, type Rejection } from './provider.ts'
import { SecretValue } from './secret-value.ts'
import { TokenClient } from './token-client.ts'
import type { IssuedToken } from './token-endpoint.ts'

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token'

export class TokenExchange implements CredentialProvider {
  readonly kind = 'token_exchange'
  readonly perPrincipal = true
  readonly #upstream: string
  readonly #config: TokenExchangeConfig
  readonly #client: TokenClient
  readonly #actor: SecretValue | undefined
  /** The cache key of each verified token's caller (a token always speaks for one principal with one set of scopes). */
  readonly #keys = new WeakMap<VerifiedToken, string>()

  constructor(upstream: UpstreamConfig, context: CredentialContext) {
    const config = upstream.auth!.token_exchange!
    this.#upstream = upstream.name
    this.#config = config
    this.#client = new TokenClient(upstream, 'token_exchange', config, context, config.max_cached)
    this.#actor = config.actor === undefined ? undefined : new SecretValue(config.actor.token, `upstream ${upstream.name}: auth.token_exchange.actor.token`, context.logger)
  }

  /** `signal` is not followed: the exchange may be shared by other calls of the same principal (its timeout bounds it). */
  headers(who: Caller | undefined): CredentialHeaders | Promise<CredentialHeaders> {
    const token = who?.token
    if (token === undefined || who?.principal === undefined) {
      return Promise.reject(new CredentialError(this.#upstream, 'no_subject_token', 'token exchange acts for a caller with a verified access token (a JWT route); this call has none'))
    }
    let key = this.#keys.get(token)
    if (key === undefined) this.#keys.set(token, (key = this.#keyOf(token, who)))
    return this.#client.keeper.get(key, this.#exchange, who)
  }

  /** The upstream refused the exchanged token: drop this principal's (only), and exchange again once. */
  async rejected(who: Caller | undefined): Promise<Rejection> {
    if (who?.token === undefined) return 'fail'
    await this.#client.keeper.drop(this.#keys.get(who.token) ?? this.#keyOf(who.token, who))
    return 'retry'
  }

  close(): void {
    this.#client.close()
    this.#actor?.close()
  }

  /** Hashed: principal names and scopes are not written into store keys. */
  #keyOf(token: VerifiedToken, who: Caller): string {
    const issuer = typeof token.claims.iss === 'string' ? token.claims.iss : ''
    const scopes = who.scopes === undefined ? '' : [...who.scopes].sort().join(' ')
    const id = [this.#client.setting, issuer, who.principal ?? '', scopes].join('\0')
    return `tx:${createHash('sha256').update(id).digest('base64url')}`
  }

  readonly #exchange = (who: Caller): Promise<IssuedToken> => {
    const subject = subjectToken(who)
    if (subject === undefined) return Promise.reject(new CredentialError(this.#upstream, 'no_subject_token', "the caller's token is no longer at hand; call again"))
    const config = this.#config
    return this.#client.request({
      grant_type: GRANT,
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN,
      requested_token_type: ACCESS_TOKEN,
      audience: config.audience,
      resource: config.resource,
      scope: config.scope,
      actor_token: this.#actor?.value,
      actor_token_type: config.actor?.token_type,
    })
  }
}
