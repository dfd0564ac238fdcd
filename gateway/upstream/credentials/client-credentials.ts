/**
 * `auth: {client_credentials: {...}}`: the gateway's own token for an upstream (OAuth 2.0 client
 * credentials, RFC 6749 §4.4), the same for every caller: one token per upstream setting, kept by the
 * TokenKeeper (here, and sealed in the shared store for every worker and host) until shortly before it
 * expires, fetched once however many calls need it at the same time.
 */
import { createHash } from 'node:crypto'
import type { ClientCredentialsConfig, UpstreamConfig } from '../../config/types.ts'
import type { CredentialContext } from './context.ts'
import type { CredentialHeaders, CredentialProvider, Rejection } from './provider.ts'
import { SecretValue } from './secret-value.ts'
import { requestToken, type IssuedToken } from './token-endpoint.ts'
import { TokenKeeper } from './token-keeper.ts'

export class ClientCredentials implements CredentialProvider {
  readonly kind = 'client_credentials'
  readonly perPrincipal = false
  readonly #upstream: string
  readonly #config: ClientCredentialsConfig
  readonly #secret: SecretValue
  readonly #keeper: TokenKeeper
  /** The shared cache's key: the setting, not the upstream's name (two routes with one setting share a token). */
  readonly #key: string

  constructor(upstream: UpstreamConfig, context: CredentialContext) {
    const config = upstream.auth!.client_credentials!
    this.#upstream = upstream.name
    this.#config = config
    this.#secret = new SecretValue(config.client_secret, `upstream ${upstream.name}: auth.client_credentials.client_secret`, context.logger)
    this.#keeper = new TokenKeeper({
      cache: context.cache,
      logger: context.logger,
      refreshBeforeMs: config.refresh_before * 1000,
      fetchTimeoutMs: config.timeout * 1000,
      maxHeld: 1,
    })
    const setting = [config.token_url, config.client_id, config.scope ?? '', config.audience ?? '', config.resource ?? ''].join('\0')
    this.#key = `cc:${createHash('sha256').update(setting).digest('base64url')}`
  }

  headers(): CredentialHeaders | Promise<CredentialHeaders> {
    return this.#keeper.get(this.#key, this.#fetch, undefined)
  }

  /** The upstream refused the token (revoked, rotated keys): drop it everywhere; the retry fetches a new one. */
  async rejected(): Promise<Rejection> {
    await this.#keeper.drop(this.#key)
    return 'retry'
  }

  close(): void {
    this.#secret.close()
  }

  readonly #fetch = (): Promise<IssuedToken> => {
    const config = this.#config
    return requestToken({
      upstream: this.#upstream,
      tokenUrl: config.token_url,
      clientId: config.client_id,
      clientSecret: this.#secret.value,
      form: { grant_type: 'client_credentials', scope: config.scope, audience: config.audience, resource: config.resource },
      timeoutMs: config.timeout * 1000,
    })
  }
}
