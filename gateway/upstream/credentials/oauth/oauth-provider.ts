/**
 * `auth: {oauth: {...}}` as the credential seam sees it (provider.ts): per principal, the principal's
 * own bearer token for the upstream. The hot path reads a worker-local copy of the token (the same
 * headers object while it holds), so a call costs no store round trip; the copy is re-read from the
 * store after LOCAL_TOKEN_MS, so a revocation made on one host holds on every host within that time.
 *
 *   headers(who) ─► local copy fresh? ─► the same headers object (sync)
 *                └─► OAuthUpstream.headers (store; refresh; or ConsentRequiredError with the URL)
 *   rejected(who, challenge) ─► copy dropped ─► refreshed: 'retry' │ consent needed: 'consent' (the next
 *                               headers(who) throws that consent) │ else the CredentialError
 */
import type { Logger } from 'pino'
import type { UpstreamConfig } from '../../../config/types.ts'
import type { SessionStore } from '../../../store/store.ts'
import type { Caller } from '../../../wire/caller.ts'
import { EdgeError } from '../../../wire/errors.ts'
import type { CredentialContext } from '../context.ts'
import { ConsentRequiredError, type CredentialHeaders, type CredentialProvider, type Rejection } from '../provider.ts'
import { loadSealingKeys, SealedCache } from '../sealed-cache.ts'
import { MemoryCredentialCache } from '../credential-cache.ts'
import { randomBytes } from 'node:crypto'
import { OAuthStore } from './oauth-store.ts'
import { OAuthUpstream } from './oauth-upstream.ts'

/** How long a worker uses its copy of a principal's token before reading the store again. */
export const LOCAL_TOKEN_MS = 15_000
/** Principals whose tokens one provider keeps a local copy of (the oldest dropped first). */
export const LOCAL_TOKENS_MAX = 10_000
/** A consent made by rejected() is thrown by the next headers() within this time (else a new one is made). */
const CONSENT_HANDOFF_MS = 10_000

const NO_HEADERS: CredentialHeaders = Object.freeze({})

interface LocalCopy {
  readonly headers: CredentialHeaders
  /** Until when the copy is used without looking at the store. */
  readonly until: number
}

/** What every OAuth upstream of one gateway shares: the store view and the index the callback finds upstreams by. */
export class OAuthRegistry {
  readonly store: OAuthStore
  readonly logger: Logger
  readonly #upstreams = new Map<string, OAuthUpstream>()

  constructor(store: OAuthStore, logger: Logger) {
    this.store = store
    this.logger = logger
  }

  add(upstream: OAuthUpstream): void {
    if (!this.#upstreams.has(upstream.id)) this.#upstreams.set(upstream.id, upstream)
  }

  find(id: string): OAuthUpstream | undefined {
    return this.#upstreams.get(id)
  }

  /** The upstreams configured with per-user OAuth. */
  all(): OAuthUpstream[] {
    return [...this.#upstreams.values()]
  }

  /** The paths of the redirect URIs, each served by every worker. */
  callbackPaths(): string[] {
    return [...new Set(this.all().map((upstream) => new URL(upstream.config.redirect_uri).pathname))]
  }

  /** The registry of `context` (made on first use; needs the session store, whose table keeps the tokens). */
  static of(context: CredentialContext): OAuthRegistry {
    const known = context.extensions.get('oauth')
    if (known instanceof OAuthRegistry) return known
    const store: SessionStore | undefined = context.sessionStore
    if (store === undefined) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', 'per-user OAuth needs the gateway\'s session store')
    const encryption = context.settings.token_encryption
    let sealer: SealedCache
    if (encryption !== undefined) sealer = new SealedCache(new MemoryCredentialCache(), loadSealingKeys(encryption))
    else if (context.settings.store === undefined || context.settings.store.type === 'memory') {
      // One process holds everything: a key of its own seals what it keeps, and dies with it.
      sealer = new SealedCache(new MemoryCredentialCache(), [{ kid: 'process', key: randomBytes(32) }])
    } else {
      throw new EdgeError('MCP_EDGE_CONFIG_INVALID', 'per-user OAuth keeps tokens in the shared store: set token_encryption.keys so they are encrypted at rest')
    }
    const registry = new OAuthRegistry(new OAuthStore(store.tasks, sealer), context.logger)
    context.extensions.set('oauth', registry)
    return registry
  }
}

export class OAuthCredentials implements CredentialProvider {
  readonly kind = 'oauth'
  readonly perPrincipal = true
  readonly upstream: OAuthUpstream
  readonly #local = new Map<string, LocalCopy>()
  readonly #handoff = new Map<string, { error: ConsentRequiredError; until: number }>()

  constructor(upstream: OAuthUpstream) {
    this.upstream = upstream
  }

  /** The maker create-provider.ts lists under `oauth`. */
  static make(config: UpstreamConfig, context: CredentialContext): OAuthCredentials {
    const registry = OAuthRegistry.of(context)
    const upstream = new OAuthUpstream(config.name, config.url!, config.auth!.oauth!, registry.store, registry.logger)
    registry.add(upstream)
    return new OAuthCredentials(upstream)
  }

  headers(who: Caller | undefined): CredentialHeaders | Promise<CredentialHeaders> {
    // The gateway's own traffic (the probe) speaks for no one: it goes without a token.
    if (who === undefined) return NO_HEADERS
    const principal = who.principal ?? ''
    const handed = this.#handoff.get(principal)
    if (handed !== undefined) {
      this.#handoff.delete(principal)
      if (handed.until > Date.now()) return Promise.reject(handed.error)
    }
    const copy = this.#local.get(principal)
    if (copy !== undefined && copy.until > Date.now()) return copy.headers
    return this.#read(principal)
  }

  async rejected(who: Caller | undefined, challenge: string | undefined): Promise<Rejection> {
    if (who === undefined) return 'fail'
    const principal = who.principal ?? ''
    this.#local.delete(principal)
    try {
      await this.upstream.rejected(who.principal, challenge)
      return 'retry'
    } catch (error) {
      if (!(error instanceof ConsentRequiredError)) throw error
      this.#handoff.set(principal, { error, until: Date.now() + CONSENT_HANDOFF_MS })
      return 'consent'
    }
  }

  /** Waits for `who` to hold a token (a consent finishing on any worker); true when it does. */
  waitForTokens(who: Caller, timeoutMs: number, signal?: { readonly aborted: boolean }): Promise<boolean> {
    this.#local.delete(who.principal ?? '')
    return this.upstream.waitForTokens(who.principal ?? '', timeoutMs, signal)
  }

  close(): void {
    this.#local.clear()
    this.#handoff.clear()
  }

  async #read(principal: string): Promise<CredentialHeaders> {
    const headers = Object.freeze(await this.upstream.headers(principal))
    if (headers.authorization !== undefined) {
      if (this.#local.size >= LOCAL_TOKENS_MAX) this.#local.delete(this.#local.keys().next().value!)
      this.#local.delete(principal)
      this.#local.set(principal, { headers, until: Date.now() + LOCAL_TOKEN_MS })
    }
    return headers
  }
}
