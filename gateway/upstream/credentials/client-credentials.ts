/**
 * `auth: {client_credentials: {...}}`: the gateway's own token for an upstream (OAuth 2.0 client
 * credentials, RFC 6749 §4.4), the same for every caller: one token per upstream setting, kept by the
 * TokenKeeper (here, and sealed in the shared store for every worker and host) until shortly before it
 * expires, fetched once however many calls need it at the same time.
 */
import { createHash } from 'node:crypto'
import type { UpstreamConfig } from '../../config/types.ts'
import type { CredentialContext } from './context.ts'
import type { CredentialHeaders, CredentialProvider, Rejection } from './provider.ts'
import { TokenClient } from './token-client.ts'
import type { IssuedToken } from './token-endpoint.ts'

export class ClientCredentials implements CredentialProvider {
  readonly kind = 'client_credentials'
  readonly perPrincipal = false
  readonly #client: TokenClient
  /** The shared cache's key: the setting, not the upstream's name (two routes with one setting share a token). */
  readonly #key: string

  constructor(upstream: UpstreamConfig, context: CredentialContext) {
    this.#client = new TokenClient(upstream, 'client_credentials', upstream.auth!.client_credentials!, context, 1)
    this.#key = `cc:${createHash('sha256').update(this.#client.setting).digest('base64url')}`
  }

  headers(): CredentialHeaders | Promise<CredentialHeaders> {
    return this.#client.keeper.get(this.#key, this.#fetch, undefined)
  }

  /** The upstream refused the token (revoked, rotated keys): drop it everywhere; the retry fetches a new one. */
  async rejected(): Promise<Rejection> {
    await this.#client.keeper.drop(this.#key)
    return 'retry'
  }

  close(): void {
    this.#client.close()
  }

  readonly #fetch = (): Promise<IssuedToken> => {
    const config = this.#client.config
    return this.#client.request({ grant_type: 'client_credentials', scope: config.scope, audience: config.audience, resource: config.resource })
  }
}
