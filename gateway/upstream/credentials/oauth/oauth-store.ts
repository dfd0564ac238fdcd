/**
 * What per-user OAuth keeps in the store's versioned table (the task table: compare-and-set, TTL,
 * an owner index that counts), every value sealed (Sealer) with its own key as additional data:
 *
 *   oauth:t:<upstream>:<principal>   the principal's tokens for that upstream (access, refresh, expiry)
 *   oauth:c:<upstream>:<issuer>      the client registered at that issuer (DCR), shared by every host
 *   oauth:s:<sha256(state)>          a pending consent: principal, upstream, PKCE verifier; owned by
 *                                    the principal's and the gateway's pending index (the bounds count them)
 *   oauth:l:<upstream>:<principal>   a refresh in progress (a lock: one host refreshes at a time)
 *
 * Principals and issuers appear as hashes, states only as hashes: the keys name nobody and a key read
 * from Redis is not a usable state. A consumed state is overwritten with a tombstone, so a replay finds
 * nothing to use.
 */
import { createHash } from 'node:crypto'
import type { TaskTable } from '../../../store/task-table.ts'
import type { SealedCache } from '../sealed-cache.ts'

/** Seals and opens values bound to their store key (AES-256-GCM with `token_encryption.keys`, as the credential cache). */
export type Sealer = Pick<SealedCache, 'seal' | 'open'>

/** The tokens one principal holds for one upstream. */
export interface StoredTokens {
  readonly accessToken: string
  readonly refreshToken?: string
  /** Epoch ms when the access token expires; undefined when the server did not say. */
  readonly expiresAt?: number
  readonly scope?: string
}

/** A client registered (or configured) at an authorization server. */
export interface StoredClient {
  readonly clientId: string
  readonly clientSecret?: string
  /** `none`, `client_secret_basic` or `client_secret_post`. */
  readonly authMethod: string
}

/** A consent the gateway is waiting for: whose, for which upstream, and the PKCE verifier. */
export interface PendingConsent {
  readonly principal: string
  /** The upstream's store id (its name and URL hashed) and its name. */
  readonly upstreamId: string
  readonly upstream: string
  readonly verifier: string
  readonly redirectUri: string
  readonly resource: string
  readonly issuer: string
  /** Where the upstream's protected resource metadata was read, for the worker that finishes the consent. */
  readonly resourceMetadata: string
  readonly scope?: string
  readonly expiresAt: number
}

const TOMBSTONE = '-'
/** Owner of every pending consent, for the gateway-wide bound. */
const ALL_PENDING = 'oauth:pending'

export const hashOf = (text: string): string => createHash('sha256').update(text).digest('base64url').slice(0, 32)

export class OAuthStore {
  readonly #table: TaskTable
  readonly #cipher: Sealer

  constructor(table: TaskTable, cipher: Sealer) {
    this.#table = table
    this.#cipher = cipher
  }

  static tokenKey(upstreamId: string, principal: string): string {
    return `oauth:t:${upstreamId}:${hashOf(principal)}`
  }

  // ---- tokens ---------------------------------------------------------------------------------

  /** The principal's tokens for the upstream and the entry's version (for compare-and-set); undefined when none. */
  async tokens(upstreamId: string, principal: string): Promise<{ tokens: StoredTokens; version: number } | undefined> {
    const key = OAuthStore.tokenKey(upstreamId, principal)
    const entry = await this.#table.read(key)
    if (entry === undefined || entry.data === TOMBSTONE) return undefined
    const plain = this.#cipher.open(key, entry.data)
    // Sealed with a key no longer configured, or tampered with: as good as none (consent again).
    if (plain === undefined) return undefined
    return { tokens: JSON.parse(plain) as StoredTokens, version: entry.version }
  }

  /** Keeps `tokens` for `ttlMs`, replacing whatever is there (a new consent wins over anything older). */
  async saveTokens(upstreamId: string, principal: string, tokens: StoredTokens, ttlMs: number): Promise<void> {
    const key = OAuthStore.tokenKey(upstreamId, principal)
    const sealed = this.#cipher.seal(key, JSON.stringify(tokens))
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.#table.read(key)
      if ((await this.#table.write(key, sealed, current?.version ?? 0, ttlMs)) > 0) return
    }
    throw new Error('tokens could not be saved: the entry kept changing')
  }

  /** Replaces the tokens only if nobody changed them since `version` (a refresh); false when someone did. */
  async replaceTokens(upstreamId: string, principal: string, version: number, tokens: StoredTokens, ttlMs: number): Promise<boolean> {
    const key = OAuthStore.tokenKey(upstreamId, principal)
    return (await this.#table.write(key, this.#cipher.seal(key, JSON.stringify(tokens)), version, ttlMs)) > 0
  }

  /** Forgets the tokens (revoked, or refused by the upstream); only those of `version` when given. */
  async dropTokens(upstreamId: string, principal: string, version?: number): Promise<boolean> {
    const key = OAuthStore.tokenKey(upstreamId, principal)
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.#table.read(key)
      if (current === undefined || current.data === TOMBSTONE) return false
      if (version !== undefined && current.version !== version) return false
      if ((await this.#table.write(key, TOMBSTONE, current.version, 1000)) > 0) return true
    }
    return false
  }

  /** Takes the refresh lock for `ttlMs`; false when another worker holds it. */
  async lockRefresh(upstreamId: string, principal: string, ttlMs: number): Promise<boolean> {
    const key = `oauth:l:${upstreamId}:${hashOf(principal)}`
    const current = await this.#table.read(key)
    return (await this.#table.write(key, String(process.pid), current?.version ?? 0, ttlMs)) > 0 && current === undefined
  }

  async unlockRefresh(upstreamId: string, principal: string): Promise<void> {
    const key = `oauth:l:${upstreamId}:${hashOf(principal)}`
    const current = await this.#table.read(key)
    if (current !== undefined) await this.#table.write(key, TOMBSTONE, current.version, 1)
  }

  // ---- registered clients ---------------------------------------------------------------------

  async client(upstreamId: string, issuer: string): Promise<StoredClient | undefined> {
    const key = `oauth:c:${upstreamId}:${hashOf(issuer)}`
    const entry = await this.#table.read(key)
    const plain = entry === undefined ? undefined : this.#cipher.open(key, entry.data)
    return plain === undefined ? undefined : JSON.parse(plain) as StoredClient
  }

  /** Keeps the first registration written: resolves to the one every host uses from now on. */
  async keepClient(upstreamId: string, issuer: string, client: StoredClient, ttlMs: number): Promise<StoredClient> {
    const key = `oauth:c:${upstreamId}:${hashOf(issuer)}`
    if ((await this.#table.write(key, this.#cipher.seal(key, JSON.stringify(client)), 0, ttlMs)) > 0) return client
    return (await this.client(upstreamId, issuer)) ?? client
  }

  async forgetClient(upstreamId: string, issuer: string): Promise<void> {
    const key = `oauth:c:${upstreamId}:${hashOf(issuer)}`
    const current = await this.#table.read(key)
    if (current !== undefined) await this.#table.write(key, TOMBSTONE, current.version, 1)
  }

  // ---- pending consents -----------------------------------------------------------------------

  /** Pending consents of `principal`, and of the whole gateway. */
  async pendingCounts(principal: string): Promise<{ principal: number; total: number }> {
    const [mine, total] = await Promise.all([this.#table.count(`oauth:p:${hashOf(principal)}`), this.#table.count(ALL_PENDING)])
    return { principal: mine, total }
  }

  /** Records a pending consent under `state` until it expires. */
  async addPending(state: string, pending: PendingConsent): Promise<void> {
    const key = `oauth:s:${hashOf(state)}`
    const ttlMs = Math.max(1, pending.expiresAt - Date.now())
    const sealed = this.#cipher.seal(key, JSON.stringify(pending))
    if ((await this.#table.write(key, sealed, 0, ttlMs, `oauth:p:${hashOf(pending.principal)}`)) === 0) throw new Error('consent state collision')
    await this.#table.write(`oauth:a:${hashOf(state)}`, '1', 0, ttlMs, ALL_PENDING)
  }

  /**
   * The pending consent of `state`, taken once: the first caller gets it and the entry becomes a
   * tombstone; a replay, a forged or an expired state gets undefined.
   */
  async takePending(state: string): Promise<PendingConsent | undefined> {
    const key = `oauth:s:${hashOf(state)}`
    const entry = await this.#table.read(key)
    if (entry === undefined || entry.data === TOMBSTONE) return undefined
    const plain = this.#cipher.open(key, entry.data)
    if (plain === undefined) return undefined
    const pending = JSON.parse(plain) as PendingConsent
    // The compare-and-set is the single use: of two requests with one state, one write wins.
    if ((await this.#table.write(key, TOMBSTONE, entry.version, 1, `oauth:p:${hashOf(pending.principal)}`)) === 0) return undefined
    const all = await this.#table.read(`oauth:a:${hashOf(state)}`)
    if (all !== undefined) await this.#table.write(`oauth:a:${hashOf(state)}`, TOMBSTONE, all.version, 1, ALL_PENDING)
    if (pending.expiresAt < Date.now()) return undefined
    return pending
  }
}
