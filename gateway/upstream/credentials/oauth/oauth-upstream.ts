/**
 * Per-user OAuth to one remote MCP server: the gateway is an OAuth client of the upstream's
 * authorization server, and keeps each principal's tokens in the store (oauth-store.ts).
 *
 *   headers(principal) ─► tokens? ──no──► metadata known? ─yes─► ConsentRequiredError(url)
 *                           │                  └─no─► {} (the upstream's 401 leads to discovery)
 *                           ├─ expiring ─► refresh (one worker at a time) ─► invalid_grant ─► consent
 *                           ▼
 *                        Authorization: Bearer <the principal's token>
 *
 *   rejected(principal, WWW-Authenticate) ─► discover ─► had a token? refresh once ─► 'retry'
 *                                                        └─ else ─► ConsentRequiredError(url)
 *
 *   complete(state, code) (the callback, any worker) ─► pending taken once ─► code + verifier ─► tokens saved
 *
 * A 401 never marks the upstream down: it concerns one principal's token, not the server.
 */
import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import { setTimeout as sleep } from 'node:timers/promises'
import { AuthServerError } from './auth-server-http.ts'
import { ConsentRequiredError, CredentialError } from '../provider.ts'
import { discover, DISCOVERY_TTL_MS, parseBearerChallenge, type Discovered } from './discovery.ts'
import type { OAuthConfig } from '../../../config/types.ts'
import { hashOf, OAuthStore, type PendingConsent, type StoredClient, type StoredTokens } from './oauth-store.ts'
import { authorizationUrl, exchangeCode, pkcePair, refreshTokens, registerClient, revokeToken } from './token-requests.ts'

/** An access token this close to its expiry is refreshed before use. */
const EXPIRY_MARGIN_MS = 30_000
/** How long a registered client is kept (it is registered again after). */
const CLIENT_TTL_MS = 90 * 24 * 3600 * 1000
/** How often a call waiting for a consent or another worker's refresh looks at the store. */
const WAIT_STEP_MS = 250

export class OAuthUpstream {
  /** The upstream's name in its route. */
  readonly name: string
  readonly url: string
  /** The store's id of this upstream (name and URL hashed: two routes naming the same server share its tokens). */
  readonly id: string
  readonly config: OAuthConfig
  readonly #store: OAuthStore
  readonly #logger: Logger
  #discovered: Discovered | undefined
  #discovering: Promise<Discovered> | undefined
  #registering: Promise<StoredClient> | undefined
  readonly #refreshing = new Map<string, Promise<StoredTokens | undefined>>()

  constructor(name: string, url: string, config: OAuthConfig, store: OAuthStore, logger: Logger) {
    this.name = name
    this.url = url
    this.config = config
    this.id = hashOf(`${name}\0${url}`)
    this.#store = store
    this.#logger = logger
  }

  get #timeoutMs(): number {
    return this.config.timeout * 1000
  }

  /** The Authorization header of `principal`'s next request to the upstream. */
  async headers(principal: string | undefined): Promise<Record<string, string>> {
    const who = this.#principal(principal)
    const held = await this.#store.tokens(this.id, who)
    if (held === undefined) {
      // Metadata from the well-known URLs; when they say nothing, the request goes without a token
      // and the upstream's 401 (its WWW-Authenticate) says where to ask.
      if (this.#fresh() === undefined && !(await this.#metadataOrNone())) return {}
      throw await this.consent(who, undefined)
    }
    let tokens: StoredTokens | undefined = held.tokens
    if (tokens.expiresAt !== undefined && tokens.expiresAt - EXPIRY_MARGIN_MS < Date.now()) {
      tokens = await this.#refresh(who, held.version)
      if (tokens === undefined) throw await this.consent(who, undefined)
    }
    return { authorization: `Bearer ${tokens.accessToken}` }
  }

  /**
   * The upstream refused `principal`'s request (401, or 403 insufficient_scope) with `wwwAuthenticate`:
   * resolves 'retry' when a refreshed token may pass, else throws ConsentRequiredError.
   */
  async rejected(principal: string | undefined, wwwAuthenticate: string | undefined): Promise<'retry'> {
    const who = this.#principal(principal)
    const challenge = parseBearerChallenge(wwwAuthenticate)
    await this.#metadata(challenge?.resourceMetadata, challenge)
    const held = await this.#store.tokens(this.id, who)
    if (held !== undefined && challenge?.error !== 'insufficient_scope') {
      const refreshed = held.tokens.refreshToken === undefined ? undefined : await this.#refresh(who, held.version)
      if (refreshed !== undefined) return 'retry'
    }
    if (held !== undefined) await this.#store.dropTokens(this.id, who, held.version)
    this.#logger.info({ upstream: this.name }, 'the upstream refused a principal\'s token: asking that principal to consent again')
    throw await this.consent(who, challenge?.scope)
  }

  /** A new pending consent for `principal`, as the error that carries its URL. */
  async consent(principal: string, challengeScope: string | undefined): Promise<ConsentRequiredError> {
    const discovered = await this.#metadata(undefined, undefined)
    const counts = await this.#guard(() => this.#store.pendingCounts(principal))
    if (counts.principal >= this.config.pending_per_principal) {
      throw new CredentialError(this.name, 'too_many_pending', `too many sign-ins pending for this caller (at most ${this.config.pending_per_principal}); finish one or wait until they expire`)
    }
    if (counts.total >= this.config.pending_total) throw new CredentialError(this.name, 'too_many_pending', 'too many sign-ins pending in the gateway; try again later')
    const client = await this.#client(discovered)
    const state = randomBytes(32).toString('base64url')
    const { verifier, challenge } = pkcePair()
    const scope = this.config.scope ?? challengeScope ?? discovered.scopesSupported?.join(' ')
    const pending: { -readonly [K in keyof PendingConsent]: PendingConsent[K] } = {
      principal,
      upstreamId: this.id,
      upstream: this.name,
      verifier,
      redirectUri: this.config.redirect_uri,
      resource: discovered.resource,
      issuer: discovered.server.issuer,
      resourceMetadata: discovered.resourceMetadata,
      expiresAt: Date.now() + this.config.consent_ttl * 1000,
    }
    if (scope !== undefined) pending.scope = scope
    await this.#guard(() => this.#store.addPending(state, pending))
    const url = authorizationUrl(discovered.server, client, { redirectUri: this.config.redirect_uri, state, challenge, resource: discovered.resource, scope })
    return new ConsentRequiredError(this.name, url, `oauth-${hashOf(state).slice(0, 16)}`)
  }

  /** The callback's second half, on whichever worker it landed: the code for tokens, kept for the pending consent's principal. */
  async complete(pending: PendingConsent, code: string): Promise<void> {
    const discovered = await this.#metadata(pending.resourceMetadata, { resourceMetadata: pending.resourceMetadata })
    if (discovered.server.issuer !== pending.issuer) throw new CredentialError(this.name, 'issuer_changed', 'the authorization server changed since the sign-in began')
    const client = await this.#client(discovered)
    const tokens = await this.#guard(() => exchangeCode(discovered.server, client, { code, verifier: pending.verifier, redirectUri: pending.redirectUri, resource: pending.resource }, this.#timeoutMs))
    await this.#store.saveTokens(this.id, pending.principal, tokens, this.#ttlOf(tokens))
  }

  /** Waits up to `timeoutMs` for `principal` to hold a token (the consent finished on any worker); true when it does. */
  async waitForTokens(principal: string, timeoutMs: number, signal?: { readonly aborted: boolean }): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (signal?.aborted !== true) {
      if ((await this.#store.tokens(this.id, principal)) !== undefined) return true
      if (Date.now() >= deadline) return false
      await sleep(WAIT_STEP_MS)
    }
    return false
  }

  /** Revokes `principal`'s tokens at the authorization server (when it offers revocation) and forgets them; false when there were none. */
  async revoke(principal: string): Promise<boolean> {
    const held = await this.#store.tokens(this.id, principal)
    if (held === undefined) return false
    try {
      const discovered = await this.#metadata(undefined, undefined)
      const client = await this.#client(discovered)
      if (held.tokens.refreshToken !== undefined) await revokeToken(discovered.server, client, held.tokens.refreshToken, 'refresh_token', this.#timeoutMs)
      await revokeToken(discovered.server, client, held.tokens.accessToken, 'access_token', this.#timeoutMs)
    } catch (error) {
      this.#logger.warn({ upstream: this.name, reason: safeReason(error) }, 'could not revoke at the authorization server; the tokens are forgotten anyway')
    }
    return this.#store.dropTokens(this.id, principal)
  }

  // ---- internals --------------------------------------------------------------------------------

  #principal(principal: string | undefined): string {
    if (principal === undefined || principal === '') throw new CredentialError(this.name, 'no_principal', 'per-user OAuth needs an authenticated caller (the route has no access control)')
    return principal
  }

  #fresh(): Discovered | undefined {
    const known = this.#discovered
    return known !== undefined && Date.now() - known.at < DISCOVERY_TTL_MS ? known : undefined
  }

  /** True once the metadata is known; false when the upstream publishes none at its well-known URLs (an authorization server failure throws). */
  async #metadataOrNone(): Promise<boolean> {
    try {
      await this.#metadata(undefined, undefined)
      return true
    } catch (error) {
      if (error instanceof CredentialError && error.reason === 'no_resource_metadata') return false
      throw error
    }
  }

  /** The upstream's metadata: cached, or discovered once for every caller waiting on this worker. */
  #metadata(resourceMetadata: string | undefined, challenge: ReturnType<typeof parseBearerChallenge>): Promise<Discovered> {
    const known = this.#fresh()
    if (known !== undefined && (resourceMetadata === undefined || resourceMetadata === known.resourceMetadata)) return Promise.resolve(known)
    this.#discovering ??= this.#guard(() => discover(this.url, challenge, this.#timeoutMs)).then(
      (discovered) => {
        this.#discovered = discovered
        this.#discovering = undefined
        return discovered
      },
      (error: unknown) => {
        this.#discovering = undefined
        throw error
      },
    )
    return this.#discovering
  }

  /** The configured client, else the one registered at this issuer (by any host), else a new registration. */
  async #client(discovered: Discovered): Promise<StoredClient> {
    const config = this.config
    if (config.client_id !== undefined) {
      const method = config.token_endpoint_auth_method ?? (config.client_secret === undefined ? 'none' : 'client_secret_basic')
      return config.client_secret === undefined ? { clientId: config.client_id, authMethod: method } : { clientId: config.client_id, clientSecret: config.client_secret, authMethod: method }
    }
    const stored = await this.#guard(() => this.#store.client(this.id, discovered.server.issuer))
    if (stored !== undefined) return stored
    this.#registering ??= this.#guard(async () => {
      const registered = await registerClient(discovered.server, config.client_name, config.redirect_uri, this.#timeoutMs)
      this.#logger.info({ upstream: this.name }, 'registered the gateway as an OAuth client of the upstream\'s authorization server')
      return this.#store.keepClient(this.id, discovered.server.issuer, registered, CLIENT_TTL_MS)
    }).finally(() => (this.#registering = undefined))
    return this.#registering
  }

  /**
   * New tokens for `principal` from the refresh token; undefined (and the tokens dropped) when the
   * server refuses it. One refresh per principal on this worker, and one across hosts (a lock in the
   * store: the others wait for its result).
   */
  #refresh(principal: string, version: number): Promise<StoredTokens | undefined> {
    let running = this.#refreshing.get(principal)
    if (running === undefined) {
      running = this.#refreshOnce(principal, version).finally(() => this.#refreshing.delete(principal))
      this.#refreshing.set(principal, running)
    }
    return running
  }

  async #refreshOnce(principal: string, version: number): Promise<StoredTokens | undefined> {
    if (!(await this.#store.lockRefresh(this.id, principal, this.#timeoutMs + 1000))) {
      // Another worker refreshes: its result appears as a newer version of the entry.
      const deadline = Date.now() + this.#timeoutMs + 1000
      while (Date.now() < deadline) {
        await sleep(WAIT_STEP_MS)
        const now = await this.#store.tokens(this.id, principal)
        if (now === undefined) return undefined
        if (now.version !== version) return now.tokens
      }
      throw new CredentialError(this.name, 'timeout', 'a token refresh on another worker did not finish in time')
    }
    try {
      const held = await this.#store.tokens(this.id, principal)
      if (held === undefined) return undefined
      if (held.version !== version) return held.tokens
      const discovered = await this.#metadata(undefined, undefined)
      const client = await this.#client(discovered)
      let tokens: StoredTokens
      try {
        tokens = await refreshTokens(discovered.server, client, held.tokens, discovered.resource, this.#timeoutMs)
      } catch (error) {
        if (error instanceof AuthServerError && error.failure === 'refused') {
          // invalid_grant (expired, revoked) and its kin: this principal signs in again.
          await this.#store.dropTokens(this.id, principal, held.version)
          this.#logger.info({ upstream: this.name, error: error.oauthError }, 'a refresh token was refused: the principal will be asked to consent again')
          return undefined
        }
        throw asCredentialError(this.name, error)
      }
      await this.#store.replaceTokens(this.id, principal, held.version, tokens, this.#ttlOf(tokens))
      return tokens
    } finally {
      await this.#store.unlockRefresh(this.id, principal).catch(() => undefined)
    }
  }

  #ttlOf(tokens: StoredTokens): number {
    if (tokens.refreshToken === undefined && tokens.expiresAt !== undefined) return Math.max(1000, tokens.expiresAt - Date.now())
    return this.config.token_ttl * 1000
  }

  /** `work`, with authorization server failures turned into this upstream's CredentialFailedError. */
  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw asCredentialError(this.name, error)
    }
  }
}

function safeReason(error: unknown): string {
  return error instanceof AuthServerError || error instanceof CredentialError ? error.message : 'unexpected failure'
}

/** An authorization server's failure as this upstream's CredentialError (its `error` code, or the kind of failure); others as they are. */
export function asCredentialError(upstream: string, error: unknown): unknown {
  if (!(error instanceof AuthServerError)) return error
  const reason = error.oauthError ?? (error.failure === 'garbage' ? 'invalid_response' : error.failure === 'refused' ? 'rejected' : error.failure === 'missing' ? 'no_resource_metadata' : error.failure)
  return new CredentialError(upstream, reason, error.message)
}
