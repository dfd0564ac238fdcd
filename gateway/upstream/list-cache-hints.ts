/**
 * The caching hints of an aggregated list, made from its parts: a list is only as cacheable as its
 * least cacheable page (the shortest TTL; private when any page is), not cacheable at all while an
 * upstream is missing from it, and private when the route filters lists by the caller's scopes.
 * 2026-07-28 clients get these (narrowing the route's own `cache:`); 2025 clients get no hints.
 */
import { hintsOf, type CacheHints, type CacheScope } from '../wire/cache-hints.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { ListKind } from './aggregate.ts'
import type { CachedPage } from './list-cache.ts'

/** A cached page is in hand: its deadline in the fan-out only bounds a promise already resolved. */
export const LIST_HIT_DEADLINE_MS = 1000

/** The hints of an upstream's page when the list cache is off: what it says, else what its credential implies. */
export function pageHints(result: JsonObject, perPrincipal: boolean): CacheHints {
  const own = hintsOf(result)
  return { ...own, scope: own.scope ?? (perPrincipal ? 'private' : 'public') }
}

/** A cached page as the upstream's answer (the fan-out reads it as it reads one). */
export function cachedPage(kind: ListKind, page: CachedPage): JsonObject {
  const result: JsonObject = { [kind]: page.items as JsonObject[] }
  if (page.nextCursor !== undefined) result.nextCursor = page.nextCursor
  return result
}

export class ListHints {
  #ttlMs = Number.POSITIVE_INFINITY
  #scope: CacheScope = 'public'

  add(hints: CacheHints): void {
    if (hints.ttlMs !== undefined) this.#ttlMs = Math.min(this.#ttlMs, hints.ttlMs)
    if (hints.scope === 'private') this.#scope = 'private'
  }

  /** The list's hints: `partial` when an upstream is missing, `perCaller` when scopes filter it. */
  of(partial: boolean, perCaller: boolean): CacheHints {
    const scope: CacheScope = perCaller ? 'private' : this.#scope
    if (partial) return { ttlMs: 0, scope }
    return Number.isFinite(this.#ttlMs) ? { ttlMs: this.#ttlMs, scope } : { scope }
  }
}
