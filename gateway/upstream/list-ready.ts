/**
 * A proxy route's aggregated lists answered ready (list-answers.ts): when an answer may be served
 * instead of merging the pages again, and how one is kept after a list made from cached pages alone.
 */
import type { SessionRecord } from '../store/store.ts'
import { keepHints, type CacheScope } from '../wire/cache-hints.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { ReadyAnswer } from './list-answers.ts'
import type { CachedPage, Lookup } from './list-cache.ts'
import { ListHints } from './list-cache-hints.ts'
import type { ProxyRoute } from './proxy-route.ts'

/**
 * The answer kept for `key` that `principal` may read, when it still holds: not expired, none of its
 * upstreams down, made with the same route page (`local`), and its upstreams' generations in the store
 * unchanged (one read). A session gets the shared result itself; the stateless wire a copy carrying
 * the time left from now (its client is told how long it may keep the list).
 */
export async function readyAnswer(proxy: ProxyRoute, key: string, principal: string | undefined, local: object | undefined, record: SessionRecord): Promise<JsonObject | undefined> {
  const listCache = proxy.listCache!
  const now = Date.now()
  const answer = listCache.answers.find(key, principal, now)
  if (answer === undefined || answer.local !== local) return undefined
  for (const name of answer.names) if (proxy.health.get(name)?.state === 'down') return undefined
  if (!(await listCache.current(answer))) return undefined
  if (record.id !== '') return answer.result
  const copy = { ...answer.result }
  keepHints(copy, hintsAt(answer, Date.now(), proxy.endpoint.scopes !== undefined))
  return copy
}

/**
 * Keeps `result`, made from `hits` (one per upstream of `names`, in order) at the generations `lookup`
 * read, for `principal` alone when a page was private.
 */
export function keepAnswer(proxy: ProxyRoute, key: string, result: JsonObject, names: readonly string[], hits: readonly CachedPage[], lookup: Lookup, local: object | undefined, principal: string | undefined): void {
  const listCache = proxy.listCache!
  let expiresAt = Number.POSITIVE_INFINITY
  let scope: CacheScope = 'public'
  for (const hit of hits) {
    expiresAt = Math.min(expiresAt, hit.expiresAt)
    if (hit.scope === 'private') scope = 'private'
  }
  // A private page is kept for its principal alone (list-cache.ts keeps none of a caller without one).
  if (scope === 'private' && principal === undefined) return
  listCache.answers.keep(key, {
    result,
    names,
    groups: names.map((name) => listCache.group(name)),
    generations: names.map((name) => lookup.generations.get(name) ?? 0),
    local,
    expiresAt,
    scope,
    principal: scope === 'private' ? principal : undefined,
  })
}

function hintsAt(answer: ReadyAnswer, now: number, perCaller: boolean): ReturnType<ListHints['of']> {
  const hints = new ListHints()
  hints.add({ ttlMs: Math.max(0, answer.expiresAt - now), scope: answer.scope })
  return hints.of(false, perCaller)
}
