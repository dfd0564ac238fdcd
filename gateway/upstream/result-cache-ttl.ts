/**
 * Which upstream tools' results may be cached: those an upstream's `tools.<name>.cache` names and
 * that list themselves read-only (docs/catalogues.md, "Cached tool results").
 */
import type { JsonObject } from '../wire/mcp-types.ts'
import type { ProxyRoute } from './proxy-route.ts'

/** Upstream tools configured with `cache:` that listed themselves without readOnlyHint: warned about once per worker. */
const warnedNotReadOnly = new WeakMap<ProxyRoute, Set<string>>()

/**
 * The TTL of an upstream tool's cached results: its upstream's `tools.<name>.cache.ttl_s`, only when
 * the tool says it is read-only. Another is never cached, and its config is warned about once.
 */
export function resultCacheTtl(proxy: ProxyRoute, upstream: string, item: JsonObject): number | undefined {
  const cache = proxy.upstreams.get(upstream)?.tools?.[String(item.name)]?.cache
  if (cache === undefined) return undefined
  const annotations = item.annotations as JsonObject | undefined
  if (annotations?.readOnlyHint === true) return cache.ttl_s * 1000
  let warned = warnedNotReadOnly.get(proxy)
  if (warned === undefined) warnedNotReadOnly.set(proxy, (warned = new Set()))
  if (!warned.has(`${upstream}\0${String(item.name)}`)) {
    warned.add(`${upstream}\0${String(item.name)}`)
    proxy.endpoint.logger.warn({ upstream, tool: item.name }, 'tools.<name>.cache is set for a tool its upstream does not list as read-only (annotations.readOnlyHint): its results are not cached')
  }
  return undefined
}
