/**
 * A proxy route's shared list cache: each upstream's list pages kept in the store (so every worker
 * and host serves them) per (route, upstream, list, cursor, scope), honouring the upstream's hints.
 *
 *   aggregate ─► lookup(kind, upstreams, caller) ── one store read ──► hit: the page, no upstream call
 *                                                                 └─► miss: ask the upstream ─► keep(page)
 *   upstream list_changed ─► invalidate(upstream): store group dropped (every host), bus ─► every worker's parsed copies
 *   reload ─► invalidateAll()
 *
 * Beside the pages, `answers` (list-answers.ts) keeps each whole aggregated list this worker made
 * from hits alone, ready to send; `current` checks one against the store's generations.
 *
 * Scope: a page is public (one entry for every caller) when the upstream says `cacheScope: public`,
 * or says nothing and was fetched with a credential that is the same for everyone; it is private
 * (one entry per principal, never read for another) when the upstream says so or when the credential
 * was the caller's own (per-user OAuth, token exchange, identity assertion). A private page of an
 * anonymous caller is not kept at all. TTL: the upstream's `ttlMs` up to `max_ttl_s`, else `ttl_s`.
 *
 * Keys are SHA-256 digests of their parts (no principal readable in the store); the upstream's config
 * is one of the parts, so a reload that changes an upstream never serves what the old one listed.
 */
import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import type { ListCacheConfig, RouteConfig, UpstreamConfig } from '../config/types.ts'
import type { CacheBounds } from '../store/cache-table.ts'
import type { SessionStore } from '../store/store.ts'
// The hints a 2026-07-28 upstream gave, also when a session's answer lost the fields (cross-era-rounds.ts).
import { hintsOf, type CacheScope } from '../wire/cache-hints.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { ListKind } from './aggregate.ts'
import { ListAnswers, type ReadyAnswer } from './list-answers.ts'

/** One upstream's page as the cache holds it (frozen: every request of the worker shares it). */
export interface CachedPage {
  readonly items: readonly JsonObject[]
  readonly nextCursor: string | undefined
  readonly scope: CacheScope
  /** When it stops being served (ms since the epoch). */
  readonly expiresAt: number
}

/** What `lookup` found: pages by upstream, and the generations a miss's `keep` must name. */
export interface Lookup {
  readonly hits: Map<string, CachedPage>
  readonly generations: Map<string, number>
  /** The caller's principal digest, or undefined for an anonymous caller. */
  readonly principal: string | undefined
}

const NO_KEYS: readonly string[] = []

/** Parsed pages a worker keeps beside the store's text, so a warm list parses nothing. */
const PARSED_MAX = 4096
/** Keys of recent (list, upstream, cursor, scope) tuples, so a warm list hashes nothing. */
const KEYS_MAX = 4096

export class ListCache {
  readonly #store: SessionStore
  readonly #location: string
  readonly #ttlMs: number
  readonly #maxTtlMs: number
  readonly #bounds: CacheBounds
  readonly #logger: Logger
  /** Per upstream: the digest of its config (a part of every key). */
  readonly #digests = new Map<string, string>()
  readonly #parsed = new Map<string, { raw: string; page: CachedPage }>()
  readonly #keys = new Map<string, string>()
  readonly #unsubscribe: () => void
  /** Whole lists made from cached pages alone, ready to send (list-answers.ts). */
  readonly answers: ListAnswers

  constructor(store: SessionStore, route: RouteConfig, config: ListCacheConfig, logger: Logger) {
    this.#store = store
    this.#location = route.location
    this.#ttlMs = config.ttl_s * 1000
    this.#maxTtlMs = config.max_ttl_s * 1000
    this.#bounds = cacheBounds(route)
    this.answers = new ListAnswers(this.#bounds)
    this.#logger = logger
    for (const upstream of route.upstreams) this.#digests.set(upstream.name, configDigest(upstream))
    // Another worker dropped an upstream's lists: the pages parsed here and the answers made of them go
    // too (the store's are gone already, and its generations moved on: `current` would refuse them).
    this.#unsubscribe = store.bus.subscribe(this.#channel(), (message) => {
      if (message.type !== 'list-cache') return
      this.#parsed.clear()
      this.answers.clear()
    })
  }

  /** The group of an upstream's lists on this route: what one list_changed drops. */
  group(upstream: string): string {
    return `l:${this.#location}:${upstream}`
  }

  /** Cached pages of `kind` for these upstreams (each at its cursor) that `principal` may read: one store read. */
  async lookup(kind: ListKind, wanted: ReadonlyArray<{ name: string; cursor: string | undefined }>, principal: string | undefined): Promise<Lookup> {
    const who = principal === undefined ? undefined : digest(principal)
    const keys: string[] = []
    const groups: string[] = []
    for (const { name, cursor } of wanted) {
      keys.push(this.#key(kind, name, cursor, undefined))
      if (who !== undefined) keys.push(this.#key(kind, name, cursor, who))
      groups.push(this.group(name))
    }
    const read = await this.#store.cache.read(keys, groups)
    const hits = new Map<string, CachedPage>()
    const generations = new Map<string, number>()
    const now = Date.now()
    let at = 0
    wanted.forEach(({ name }, index) => {
      generations.set(name, read.generations[index] ?? 0)
      const shared = this.#page(keys[at]!, read.values[at++])
      const own = who === undefined ? undefined : this.#page(keys[at]!, read.values[at++])
      const page = shared ?? own
      if (page !== undefined && page.expiresAt > now) hits.set(name, page)
    })
    return { hits, generations, principal: who }
  }

  /**
   * Keeps an upstream's page (in the background: the answer does not wait) and returns the hints it
   * carries for the route's own answer. `perPrincipal`: fetched with the caller's own credential.
   */
  keep(kind: ListKind, name: string, cursor: string | undefined, result: JsonObject, lookup: Lookup, perPrincipal: boolean): { ttlMs: number; scope: CacheScope } {
    const hints = hintsOf(result)
    const scope: CacheScope = hints.scope ?? (perPrincipal ? 'private' : 'public')
    const ttlMs = hints.ttlMs === undefined ? this.#ttlMs : Math.min(hints.ttlMs, this.#maxTtlMs)
    const items = result[kind]
    // A private page of nobody in particular (an open route) is shared with no one: not kept.
    if (ttlMs <= 0 || !Array.isArray(items) || (scope === 'private' && lookup.principal === undefined)) return { ttlMs, scope }
    const next = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined
    const value = JSON.stringify({ i: items, n: next, s: scope, e: Date.now() + ttlMs })
    const owner = scope === 'private' ? lookup.principal : undefined
    const entry = { key: this.#key(kind, name, cursor, owner), value, ttlMs, route: this.#location, group: this.group(name), principal: owner }
    this.#store.cache.write(entry, lookup.generations.get(name) ?? 0, this.#bounds).catch((error: unknown) => {
      this.#logger.warn({ err: error, upstream: name, list: kind }, 'list cache: could not keep a page')
    })
    return { ttlMs, scope }
  }

  /**
   * True while `answer` is what the store's pages still make: none of its upstreams' groups was dropped
   * since (on any worker or host). One store read, of the generations alone; one that fails is false.
   */
  async current(answer: ReadyAnswer): Promise<boolean> {
    let generations: number[]
    try {
      generations = (await this.#store.cache.read(NO_KEYS, answer.groups)).generations
    } catch {
      return false
    }
    for (let i = 0; i < generations.length; i++) {
      if (generations[i] !== answer.generations[i]) {
        this.answers.drop(answer)
        return false
      }
    }
    return true
  }

  /** Drops every list of `upstream` on this route, for every worker and host. */
  async invalidate(upstream: string): Promise<void> {
    this.answers.clear()
    await this.#store.cache.drop(this.group(upstream))
    await this.#store.bus.publish(this.#channel(), { type: 'list-cache', upstream })
  }

  /** Drops every list of the route (a reload). */
  async invalidateAll(): Promise<void> {
    this.answers.clear()
    await Promise.all([...this.#digests.keys()].map((name) => this.#store.cache.drop(this.group(name))))
    await this.#store.bus.publish(this.#channel(), { type: 'list-cache' })
  }

  close(): void {
    this.#unsubscribe()
    this.#parsed.clear()
    this.answers.clear()
  }

  #channel(): string {
    return `list-cache:${this.#location}`
  }

  #key(kind: ListKind, name: string, cursor: string | undefined, owner: string | undefined): string {
    const plain = `${kind}\0${name}\0${cursor ?? ''}\0${owner ?? ''}`
    let key = this.#keys.get(plain)
    if (key === undefined) {
      key = digest(`l\0${this.#location}\0${this.#digests.get(name) ?? ''}\0${plain}`)
      if (this.#keys.size >= KEYS_MAX) this.#keys.delete(this.#keys.keys().next().value!)
      this.#keys.set(plain, key)
    }
    return key
  }

  /** The page a stored text holds; parsed once per worker while the text stays the same. */
  #page(key: string, raw: string | undefined): CachedPage | undefined {
    if (raw === undefined) return undefined
    const known = this.#parsed.get(key)
    if (known !== undefined && known.raw === raw) return known.page
    let page: CachedPage
    try {
      const stored = JSON.parse(raw) as { i: JsonObject[]; n?: string; s: CacheScope; e: number }
      page = deepFreeze({ items: stored.i, nextCursor: stored.n, scope: stored.s, expiresAt: stored.e })
    } catch {
      return undefined
    }
    if (this.#parsed.size >= PARSED_MAX) this.#parsed.delete(this.#parsed.keys().next().value!)
    this.#parsed.set(key, { raw, page })
    return page
  }
}

/** The cache bounds of a route: the gateway's `limits`. */
export function cacheBounds(route: RouteConfig): CacheBounds {
  return {
    routeBytes: route.limits.cache_bytes_per_route,
    totalBytes: route.limits.cache_bytes_total,
    principalEntries: route.limits.cache_entries_per_principal,
  }
}

/** A short, fixed-length digest: keys and principals are never readable in the store. */
export function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url')
}

/** What identifies an upstream's lists: where it is and how it is reached and named (not its secrets' values). */
function configDigest(upstream: UpstreamConfig): string {
  const { name, url, command, env, cwd, isolation, auth } = upstream
  return digest(JSON.stringify({ name, url, command, env: env === undefined ? undefined : Object.keys(env).sort(), cwd, isolation, auth: auth === undefined ? undefined : Object.keys(auth) })).slice(0, 16)
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}
