/**
 * Tokens the gateway got for itself, kept until shortly before they expire, in this process and in
 * the shared cache, and fetched once however many calls, workers and hosts need one at the same time:
 *
 *   get(key) ─► held here, before its refresh time? ──yes──► its headers (synchronous, the same object)
 *                 │ no (or past refresh, still valid: returned, and refreshed in the background)
 *                 ▼
 *            a fetch of this key in flight here? ──yes──► wait for it            (single flight: process)
 *                 │ no
 *                 ▼
 *            shared cache has a fresh one? ──yes──► keep it here
 *                 │ no
 *                 ▼
 *            lock the key (SET NX PX) ──taken──► fetch ─► keep here and in the cache ─► unlock
 *                 │ held elsewhere                                                    (single flight: hosts)
 *                 └──► poll the cache until the holder stored it (or its lock lapsed: fetch)
 *
 * A cache that cannot be reached (Redis down) is not a reason to fail a call: the token is fetched
 * and kept here only.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { CredentialCache } from './credential-cache.ts'
import type { CredentialHeaders } from './provider.ts'
import type { IssuedToken } from './token-endpoint.ts'

interface Held {
  readonly headers: CredentialHeaders
  readonly expiresAt: number
  readonly refreshAt: number
}

/** A token as the shared cache keeps it. */
interface Stored {
  readonly accessToken: string
  readonly expiresAt: number
  readonly issuedAt: number
}

export interface KeeperOptions {
  readonly cache: CredentialCache
  readonly logger: Logger
  /** A token is refreshed this long before it expires (at most half its lifetime). */
  readonly refreshBeforeMs: number
  /** How long one fetch may take (the cross-process lock lasts a little longer). */
  readonly fetchTimeoutMs: number
  /** Tokens held in this process (the oldest goes first when full). */
  readonly maxHeld: number
}

/** Milliseconds between looks at the cache while another process fetches. */
const POLL_MS = 25
/** A token this close to expiry is not handed out any more. */
const SAFETY_MS = 2_000

export class TokenKeeper {
  readonly #options: KeeperOptions
  readonly #held = new Map<string, Held>()
  readonly #flights = new Map<string, Promise<CredentialHeaders>>()

  constructor(options: KeeperOptions) {
    this.#options = options
  }

  /**
   * The headers for `key`'s token; `fetch(arg)` asks the authorization server (its errors reject the
   * call). `fetch` and `arg` apart, so a caller passes a bound method and needs no closure per call.
   */
  get<A>(key: string, fetcher: (arg: A) => Promise<IssuedToken>, arg: A): CredentialHeaders | Promise<CredentialHeaders> {
    const held = this.#held.get(key)
    if (held !== undefined) {
      const now = Date.now()
      if (now < held.refreshAt) return held.headers
      if (now < held.expiresAt - SAFETY_MS) {
        // Still valid: this call goes on with it, the next ones get the new token.
        if (!this.#flights.has(key)) this.#fly(key, () => fetcher(arg), true).catch(() => undefined)
        return held.headers
      }
    }
    return this.#flights.get(key) ?? this.#fly(key, () => fetcher(arg), false)
  }

  /** Forgets `key`'s token here and in the shared cache (the upstream refused it). */
  async drop(key: string): Promise<void> {
    this.#held.delete(key)
    await this.#options.cache.delete(key).catch(() => undefined)
  }

  #fly(key: string, fetch: () => Promise<IssuedToken>, refreshing: boolean): Promise<CredentialHeaders> {
    const flight = this.#obtain(key, fetch, refreshing).finally(() => this.#flights.delete(key))
    this.#flights.set(key, flight)
    return flight
  }

  async #obtain(key: string, fetch: () => Promise<IssuedToken>, refreshing: boolean): Promise<CredentialHeaders> {
    const { cache, fetchTimeoutMs } = this.#options
    // A refresh ignores the shared copy only if it is the one held here (another host may have a newer one).
    const shared = await this.#shared(key)
    if (shared !== undefined && (!refreshing || shared.expiresAt > (this.#held.get(key)?.expiresAt ?? 0))) return this.#keep(key, shared)
    const release = await cache.lock(key, fetchTimeoutMs + 1000).catch(() => null)
    if (release === undefined) {
      // Another process is fetching: wait for its token rather than asking a second time.
      const deadline = Date.now() + fetchTimeoutMs + 1000
      while (Date.now() < deadline) {
        await sleep(POLL_MS)
        const stored = await this.#shared(key)
        if (stored !== undefined) return this.#keep(key, stored)
      }
    }
    try {
      if (release) {
        // Taken: but the holder before us may have stored its token and let go between our read and our
        // lock (a fast token endpoint), so look again before asking a second time.
        const stored = await this.#shared(key)
        if (stored !== undefined && (!refreshing || stored.expiresAt > (this.#held.get(key)?.expiresAt ?? 0))) return this.#keep(key, stored)
      }
      const token = await fetch()
      const issuedAt = Date.now()
      const held = this.#keep(key, { accessToken: token.accessToken, expiresAt: token.expiresAt, issuedAt })
      await cache.set(key, JSON.stringify({ t: token.accessToken, e: token.expiresAt, i: issuedAt }), token.expiresAt - issuedAt).catch((error: unknown) => {
        this.#options.logger.warn({ err: { message: (error as Error).message } }, 'cannot keep an upstream token in the store; it is kept in this process only')
      })
      return held
    } finally {
      await release?.().catch(() => undefined)
    }
  }

  /** The fresh token of `key` in the shared cache, or undefined. */
  async #shared(key: string): Promise<Stored | undefined> {
    const text = await this.#options.cache.get(key).catch(() => undefined)
    if (text === undefined) return undefined
    try {
      const { t, e, i } = JSON.parse(text) as { t?: unknown; e?: unknown; i?: unknown }
      if (typeof t !== 'string' || typeof e !== 'number' || typeof i !== 'number') return undefined
      if (Date.now() >= this.#refreshAt(i, e)) return undefined
      return { accessToken: t, expiresAt: e, issuedAt: i }
    } catch {
      return undefined
    }
  }

  /** When a token got at `issuedAt` is refreshed: `refreshBefore` ahead of its expiry, at most half its life. */
  #refreshAt(issuedAt: number, expiresAt: number): number {
    return Math.min(expiresAt - SAFETY_MS, expiresAt - Math.min(this.#options.refreshBeforeMs, (expiresAt - issuedAt) / 2))
  }

  #keep(key: string, token: Stored): CredentialHeaders {
    const previous = this.#held.get(key)
    if (previous !== undefined && previous.headers.authorization === `Bearer ${token.accessToken}`) return previous.headers
    const headers: CredentialHeaders = Object.freeze({ authorization: `Bearer ${token.accessToken}` })
    this.#held.delete(key)
    if (this.#held.size >= this.#options.maxHeld) this.#held.delete(this.#held.keys().next().value as string)
    this.#held.set(key, { headers, expiresAt: token.expiresAt, refreshAt: this.#refreshAt(token.issuedAt, token.expiresAt) })
    return headers
  }
}
