/**
 * Caching hints (2026-07-28, SEP-2549): `ttlMs` and `cacheScope` on list and read results. A result
 * that loses its hint fields on the way (a 2026-07-28 upstream's answer given to a 2025 session)
 * keeps them beside it here, so what a gateway caches and tells its own clients still follows them.
 */

export type CacheScope = 'public' | 'private'

/** What a result says about its caching; a field it does not give is absent. */
export interface CacheHints {
  readonly ttlMs?: number
  readonly scope?: CacheScope
}

const KEPT = new WeakMap<object, CacheHints>()

/** Keeps `hints` beside `result` (the object itself, not a copy of it). */
export function keepHints(result: object, hints: CacheHints): void {
  KEPT.set(result, hints)
}

/** The hints kept beside `result`, else those in its own fields. */
export function hintsOf(result: Record<string, unknown>): CacheHints {
  const kept = KEPT.get(result)
  if (kept !== undefined) return kept
  return ownHints(result)
}

/** The hints in a result's own `ttlMs` and `cacheScope` fields (malformed values are no hint). */
export function ownHints(result: Record<string, unknown>): CacheHints {
  const { ttlMs, cacheScope } = result
  const hints: { ttlMs?: number; scope?: CacheScope } = {}
  if (typeof ttlMs === 'number' && Number.isFinite(ttlMs) && ttlMs >= 0) hints.ttlMs = Math.floor(ttlMs)
  if (cacheScope === 'public' || cacheScope === 'private') hints.scope = cacheScope
  return hints
}

/** The stricter of two hints: the shorter TTL, and private when either is. */
export function stricter(a: { ttlMs: number; scope: CacheScope }, b: CacheHints): { ttlMs: number; scope: CacheScope } {
  return {
    ttlMs: b.ttlMs === undefined ? a.ttlMs : Math.min(a.ttlMs, b.ttlMs),
    scope: a.scope === 'private' || b.scope === 'private' ? 'private' : 'public',
  }
}
