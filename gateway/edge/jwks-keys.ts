/**
 * An issuer's JWKS as the verifier uses it: the last set fetched, kept in hand, and fetches the
 * traffic cannot multiply. jose's remote key set drops its keys when a refresh fails (a JWKS answering
 * 500 made valid tokens 401 `invalid_token`) and fetches again on the next request after a failure
 * (every unknown kid or new token then hit a provider that was down). Here:
 *
 *   key for a token ─► keys in hand? ─no──► fetch (or join the fetch under way) ─fails─► 503 + Retry-After
 *                        │ yes (even older than jwks_cache: refreshed behind the request, not before it)
 *                        ▼
 *                      kid known? ─yes─► the key
 *                        │ no (a rotation?)
 *                        ▼
 *                      may fetch (none within jwks_cooldown)? ─yes─► fetch, look again ─still unknown─► 401 unknown key
 *                        │ no                                                    └─fetch failed─► 503 + Retry-After
 *                        ▼
 *                      the last fetch failed? ─yes─► 503 + Retry-After (the rest of the cooldown)
 *                        └─no──► 401 unknown key
 *
 * Every fetch, good or failed, starts the cooldown: at most one fetch per `jwks_cooldown` seconds
 * (and one at a time), whatever the traffic.
 */
import type { JSONWebKeySet, JWTVerifyGetKey } from 'jose'
import { EdgeError } from '../wire/errors.ts'
import { jose } from './jose-module.ts'

export interface JwksTimings {
  /** Milliseconds a fetched set is used before it is refreshed (behind the requests that use it). */
  cacheMs: number
  /** Least milliseconds between two fetches, good or failed. */
  cooldownMs: number
  /** How long one fetch may take. */
  timeoutMs: number
}

/** The keys cannot be had now; the answer says when to try again. */
export function keysUnavailable(message: string, retryAfterMs: number): EdgeError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000))
  return new EdgeError('MCP_EDGE_AUTH_UNAVAILABLE', message, { headers: { 'retry-after': String(seconds) } })
}

export class JwksKeys {
  readonly #url: string
  readonly #timings: JwksTimings
  /** The last set fetched: kept whatever later fetches do. */
  #keys: JWTVerifyGetKey | undefined
  #fetchedAt = Number.NEGATIVE_INFINITY
  /** When the last fetch started (good or failed): the cooldown counts from it. */
  #attemptAt = Number.NEGATIVE_INFINITY
  /** Why the last fetch failed; undefined when it succeeded. */
  #failure: string | undefined
  #fetching: Promise<void> | undefined
  /** Fetches started, for tests and metrics. */
  fetches = 0

  constructor(url: string, timings: JwksTimings) {
    this.#url = url
    this.#timings = timings
  }

  /** jose's key function: the key a token names, under the rules drawn above. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    if (this.#keys === undefined) {
      await this.#fetchIfAllowed()
      if (this.#keys === undefined) throw this.#unavailable()
    } else if (Date.now() - this.#fetchedAt > this.#timings.cacheMs) {
      // Stale: refreshed behind this request; the keys in hand answer it.
      void this.#fetchIfAllowed()
    }
    try {
      return await this.#keys(header, token)
    } catch (error) {
      const { errors } = await jose()
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error
      if (this.#fetching !== undefined || this.#mayFetch()) {
        await this.#fetchIfAllowed()
        if (this.#failure !== undefined) throw this.#unavailable()
        return this.#keys(header, token)
      }
      if (this.#failure !== undefined) throw this.#unavailable()
      throw error
    }
  }

  /** Fetches now unless a fetch is under way (then waits for it); resolves either way. */
  refresh(): Promise<void> {
    return this.#fetching ?? this.#fetch()
  }

  /** The reason of the last failed fetch, if the last one failed. */
  get failure(): string | undefined {
    return this.#failure
  }

  #mayFetch(): boolean {
    return Date.now() - this.#attemptAt >= this.#timings.cooldownMs
  }

  #fetchIfAllowed(): Promise<void> {
    if (this.#fetching !== undefined) return this.#fetching
    return this.#mayFetch() ? this.#fetch() : Promise.resolve()
  }

  #fetch(): Promise<void> {
    this.#attemptAt = Date.now()
    this.fetches++
    this.#fetching = fetchJwks(this.#url, this.#timings.timeoutMs).then(async (set) => (await jose()).createLocalJWKSet(set)).then(
      (keys) => {
        this.#keys = keys
        this.#fetchedAt = Date.now()
        this.#failure = undefined
      },
      (error: unknown) => {
        this.#failure = (error as Error).message
      },
    ).finally(() => (this.#fetching = undefined))
    return this.#fetching
  }

  #unavailable(): EdgeError {
    const wait = this.#timings.cooldownMs - (Date.now() - this.#attemptAt)
    return keysUnavailable(`The authorization server's keys cannot be fetched (${this.#failure ?? 'no answer yet'}); retry later`, wait)
  }
}

/** One JWKS fetch: a 200 with a JSON Web Key Set, within `timeoutMs`; anything else throws. */
async function fetchJwks(url: string, timeoutMs: number): Promise<JSONWebKeySet> {
  let response: Response
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error', headers: { accept: 'application/json' } })
  } catch (error) {
    const name = (error as Error).name
    throw new Error(name === 'TimeoutError' || name === 'AbortError' ? `no answer from ${url} within ${timeoutMs} ms` : `${url}: ${(error as Error).message}`)
  }
  if (response.status !== 200) {
    await response.body?.cancel()
    throw new Error(`${url} answered HTTP ${response.status}`)
  }
  let set: unknown
  try {
    set = await response.json()
  } catch {
    throw new Error(`${url} did not answer JSON`)
  }
  // createLocalJWKSet checks the shape further; this much tells a page from a key set.
  if (typeof set !== 'object' || set === null || !Array.isArray((set as { keys?: unknown }).keys)) throw new Error(`${url} did not answer a JSON Web Key Set`)
  return set as JSONWebKeySet
}
