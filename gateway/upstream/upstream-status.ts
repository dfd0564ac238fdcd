/** Each upstream of a proxy route as the metrics, the admin API and /readyz show it. */
import type { UpstreamConfig } from '../config/types.ts'
import type { StdioTransports } from './connect.ts'
import type { HealthReport, UpstreamHealth } from './health.ts'

/** One upstream as this worker sees it (`children`, `restarts`: stdio upstreams only). */
export interface UpstreamStatus extends HealthReport {
  name: string
  transport: 'http' | 'websocket' | 'sse' | 'stdio' | 'openapi'
  reconnects: number
  children?: number
  restarts?: number
}

/** Each upstream's transport, health, reconnections and stdio children, in config order. */
export function upstreamStatuses(upstreams: readonly UpstreamConfig[], health: ReadonlyMap<string, UpstreamHealth>, stdio: StdioTransports | undefined): UpstreamStatus[] {
  const pools = new Map((stdio?.status?.() ?? []).map((pool) => [pool.upstream, pool]))
  return upstreams.map((upstream) => {
    const own = health.get(upstream.name)!
    const pool = pools.get(upstream.name)
    const transport = transportOf(upstream)
    const status: UpstreamStatus = { name: upstream.name, transport, ...own.report(), reconnects: own.recoveries }
    if (transport === 'stdio') Object.assign(status, { children: pool?.children.length ?? 0, restarts: pool?.restarts ?? 0 })
    return status
  })
}

/** Each upstream's health on this worker, for /readyz. */
export function healthReports(health: ReadonlyMap<string, UpstreamHealth>): Record<string, HealthReport> {
  return Object.fromEntries([...health].map(([name, own]) => [name, own.report()]))
}

function transportOf(upstream: UpstreamConfig): UpstreamStatus['transport'] {
  if (upstream.openapi !== undefined) return 'openapi'
  if (upstream.url === undefined) return 'stdio'
  if (upstream.sse !== undefined) return 'sse'
  return /^wss?:/.test(upstream.url) ? 'websocket' : 'http'
}
