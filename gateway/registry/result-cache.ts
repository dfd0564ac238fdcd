/**
 * Cached tool results, for tools that declare `cache: {ttl_s}` (a handler tool in its options, an
 * upstream tool under its upstream's `tools:`) and are read-only (`annotations.readOnlyHint: true`).
 *
 *   tools/call ─► key: (route, tool, digest of the arguments, principal | public) ─► store read
 *                   hit ──► a copy of the kept result (the call record says cached)
 *                   miss ─► the call ─► success? ─► kept for ttl_s (in the background)
 *                                       isError, a JSON-RPC error, input required ─► never kept
 *
 * A result is per principal unless the route says `result_cache: {scope: public}`; on a route
 * without authentication (no principal) a private result is not cached at all, since anonymous
 * callers are different people. Bounded by the store's cache bounds (bytes per route and in total,
 * entries per principal: the gateway's `limits`).
 */
import { createHash } from 'node:crypto'
import type { LimitsConfig } from '../config/types.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { RequestContext } from './context.ts'
import { canonicalJson } from '../wire/canonical-json.ts'

/**
 * The store's cache table as this cache uses it (store/cache-table.ts; the registry does not import
 * the store, so the shape is restated here and checked where the two meet).
 */
export interface ResultTable {
  read(keys: readonly string[], groups: readonly string[]): Promise<{ values: Array<string | undefined>; generations: number[] }>
  write(
    entry: { key: string; value: string; ttlMs: number; route: string; group: string; principal?: string | undefined },
    generation: number,
    bounds: { routeBytes: number; totalBytes: number; principalEntries: number },
  ): Promise<boolean>
}

/** Where a failure to keep a result is reported. */
interface WarnLog {
  warn(fields: object, message: string): void
}

/** The route as the cache needs it. */
export interface ResultCacheRoute {
  readonly location: string
  readonly result_cache: { readonly scope: 'public' | 'private' }
  readonly limits: Pick<LimitsConfig, 'cache_bytes_per_route' | 'cache_bytes_total' | 'cache_entries_per_principal'>
}

export class ResultCache {
  readonly #store: { readonly cache: ResultTable }
  readonly #route: ResultCacheRoute
  readonly #logger: WarnLog

  constructor(store: { readonly cache: ResultTable }, route: ResultCacheRoute, logger: WarnLog) {
    this.#store = store
    this.#route = route
    this.#logger = logger
  }

  /**
   * The result of `call` for `params` (a tools/call's), from the cache when a fresh one is kept for
   * these arguments and this caller; a successful result is kept for `ttlMs`. A call that cannot be
   * cached (a task, a stateless round with answers, an anonymous caller of a private cache) just runs.
   * `served` hears whether the answer came from the cache (the call record says "cached").
   */
  async through(tool: string, ttlMs: number, params: JsonObject, ctx: RequestContext, call: () => JsonObject | Promise<JsonObject>, served?: (cached: boolean) => void): Promise<JsonObject> {
    const owner = this.#owner(ctx)
    if (owner === undefined || params.task !== undefined || params.inputResponses !== undefined || params.requestState !== undefined) return call()
    const key = digest(`r\0${this.#route.location}\0${tool}\0${canonicalJson(params.arguments ?? {})}\0${owner}`)
    const group = `r:${this.#route.location}:${tool}`
    let read: { values: Array<string | undefined>; generations: number[] }
    try {
      read = await this.#store.cache.read([key], [group])
    } catch (error) {
      // The store cannot be read: the call runs as if nothing were cached (and keeps nothing).
      this.#logger.warn({ err: error, tool }, 'result cache: the store could not be read; the tool runs')
      return call()
    }
    const kept = read.values[0]
    served?.(kept !== undefined)
    if (kept !== undefined) return JSON.parse(kept) as JsonObject
    const result = await call()
    if (result.isError !== true && result.resultType !== 'input_required' && result.resultType !== 'task') {
      const limits = this.#route.limits
      const entry = { key, value: JSON.stringify(result), ttlMs, route: this.#route.location, group, principal: owner === '' ? undefined : owner }
      const bounds = { routeBytes: limits.cache_bytes_per_route, totalBytes: limits.cache_bytes_total, principalEntries: limits.cache_entries_per_principal }
      this.#store.cache.write(entry, read.generations[0] ?? 0, bounds).catch((error: unknown) => {
        this.#logger.warn({ err: error, tool }, 'result cache: could not keep a result')
      })
    }
    return result
  }

  /** Whose entry a call reads and writes: '' for a public cache, the principal's digest, or undefined (not cached). */
  #owner(ctx: RequestContext): string | undefined {
    if (this.#route.result_cache.scope === 'public') return ''
    const principal = ctx.caller.principal
    return principal === undefined ? undefined : digest(`p\0${principal}`)
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url')
}
