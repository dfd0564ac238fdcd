/**
 * The gateway as an OAuth client of one token endpoint, for the kinds that get a token of their own
 * (client_credentials, token_exchange): its client secret (a file is re-read when it changes), the
 * TokenKeeper that holds what it was issued, and the request with its authentication. The kinds differ
 * only in the grant's form and in whose token a key names.
 */
import type { TokenEndpointConfig, UpstreamConfig } from '../../config/types.ts'
import type { CredentialContext } from './context.ts'
import { SecretValue } from './secret-value.ts'
import { requestToken, type IssuedToken } from './token-endpoint.ts'
import { TokenKeeper } from './token-keeper.ts'

export class TokenClient {
  readonly keeper: TokenKeeper
  /** What decides the token issued (endpoint, client, scope, audience, resource): the start of every cache key. */
  readonly setting: string
  readonly #upstream: string
  /** The setting as configured (a grant's form reads scope, audience, resource from it). */
  readonly config: TokenEndpointConfig
  readonly #secret: SecretValue

  /** `kind` names the setting in messages (`auth.<kind>.client_secret`); `maxHeld` tokens are kept per worker. */
  constructor(upstream: UpstreamConfig, kind: string, config: TokenEndpointConfig, context: CredentialContext, maxHeld: number) {
    this.#upstream = upstream.name
    this.config = config
    this.#secret = new SecretValue(config.client_secret, `upstream ${upstream.name}: auth.${kind}.client_secret`, context.logger)
    this.keeper = new TokenKeeper({
      cache: context.cache,
      logger: context.logger,
      refreshBeforeMs: config.refresh_before * 1000,
      fetchTimeoutMs: config.timeout * 1000,
      maxHeld,
    })
    this.setting = [config.token_url, config.client_id, config.scope ?? '', config.audience ?? '', config.resource ?? ''].join('\0')
  }

  /** One token request with this grant's `form`, the client authenticated with its current secret. */
  request(form: Readonly<Record<string, string | undefined>>): Promise<IssuedToken> {
    const config = this.config
    return requestToken({
      upstream: this.#upstream,
      tokenUrl: config.token_url,
      clientId: config.client_id,
      clientSecret: this.#secret.value,
      form,
      timeoutMs: config.timeout * 1000,
    })
  }

  close(): void {
    this.#secret.close()
  }
}
