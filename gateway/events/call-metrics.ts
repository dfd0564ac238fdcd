/**
 * The call events as Prometheus metrics (read at scrape time from the tallies call-events.ts keeps;
 * nothing is recorded twice):
 *
 *   mcp_edge_calls_total{route, method, component}                 finished calls
 *   mcp_edge_call_errors_total{route, method, component, kind}     failed calls, by error kind
 *   mcp_edge_call_duration_seconds{route, method, component}       their latency (histogram)
 *   mcp_edge_upstream_up{route, upstream}                          1 up, 0 down or not yet known (min over workers)
 *   mcp_edge_upstream_calls_total{route, upstream}                 requests sent to the upstream
 *   mcp_edge_upstream_errors_total{route, upstream, kind}          those that failed, by kind
 *   mcp_edge_upstream_duration_seconds{route, upstream}            their latency (histogram)
 *   mcp_edge_upstream_reconnects_total{route, upstream}            times it came back after being down
 *   mcp_edge_upstream_stdio_children{route, upstream}              running children of a stdio upstream's pool
 *   mcp_edge_upstream_stdio_restarts_total{route, upstream}        stdio children that died unexpectedly
 *
 * `route` and `upstream` come from the config, `method` from the MCP method set (else `other`),
 * `component` from the route's registry or its upstreams' lists (else `_other`, and at most
 * MAX_COMPONENTS_PER_ROUTE per route), `kind` from the fixed ErrorKind set.
 */
import { Gauge, type Registry } from 'prom-client'
import type { UpstreamStatus } from '../upstream/proxy-route.ts'
import { CALL_BUCKETS, type CallEvents, type Tally } from './call-events.ts'

/** One sample of a scraped metric; `metricName` names a histogram's _bucket/_sum/_count series. */
export interface MetricValue { value: number; labels: Record<string, string | number>; metricName?: string }

/** A metric whose values are read from `values()` at scrape time (prom-client's Metric shape). */
export function scrapedMetric(registry: Registry, name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[]): void {
  registry.registerMetric({
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
  } as unknown as Parameters<Registry['registerMetric']>[0])
}

function histogram(values: MetricValue[], name: string, tally: Tally, labels: Record<string, string>): void {
  let cumulative = 0
  CALL_BUCKETS.forEach((le, i) => {
    cumulative += tally.buckets[i]!
    values.push({ metricName: `${name}_bucket`, value: cumulative, labels: { ...labels, le } })
  })
  values.push({ metricName: `${name}_bucket`, value: tally.calls, labels: { ...labels, le: '+Inf' } })
  values.push({ metricName: `${name}_sum`, value: tally.sumSeconds, labels })
  values.push({ metricName: `${name}_count`, value: tally.calls, labels })
}

/** Each proxy route's upstreams, by route location. */
export type UpstreamSource = () => ReadonlyMap<string, readonly UpstreamStatus[]>

export function registerCallMetrics(registry: Registry, events: () => CallEvents, upstreams: UpstreamSource): void {
  const perCall = (each: (values: MetricValue[], tally: Tally, labels: Record<string, string>) => void) => (): MetricValue[] => {
    const values: MetricValue[] = []
    for (const [route, calls] of events().routes) {
      for (const [key, tally] of calls.tallies) {
        const cut = key.indexOf('\0')
        each(values, tally, { route, method: key.slice(0, cut), component: key.slice(cut + 1) })
      }
    }
    return values
  }
  const perUpstream = (each: (values: MetricValue[], tally: Tally, labels: Record<string, string>) => void) => (): MetricValue[] => {
    const values: MetricValue[] = []
    for (const [route, calls] of events().routes) for (const [upstream, tally] of calls.upstreams) each(values, tally, { route, upstream })
    return values
  }
  const errors = (values: MetricValue[], tally: Tally, labels: Record<string, string>): void => {
    for (const [kind, value] of tally.errors) values.push({ value, labels: { ...labels, kind } })
  }
  scrapedMetric(registry, 'mcp_edge_calls_total', 'Finished MCP calls by route, method and component (tool, prompt, resource or template)', 'counter',
    perCall((values, tally, labels) => values.push({ value: tally.calls, labels })))
  scrapedMetric(registry, 'mcp_edge_call_errors_total', 'Failed MCP calls by route, method, component and error kind', 'counter', perCall(errors))
  scrapedMetric(registry, 'mcp_edge_call_duration_seconds', 'Latency of MCP calls, from dispatch to the answer sent', 'histogram',
    perCall((values, tally, labels) => histogram(values, 'mcp_edge_call_duration_seconds', tally, labels)))
  scrapedMetric(registry, 'mcp_edge_upstream_calls_total', 'Requests a proxy route sent to an upstream', 'counter',
    perUpstream((values, tally, labels) => values.push({ value: tally.calls, labels })))
  scrapedMetric(registry, 'mcp_edge_upstream_errors_total', 'Upstream requests that failed, by error kind (unavailable: not reached)', 'counter', perUpstream(errors))
  scrapedMetric(registry, 'mcp_edge_upstream_duration_seconds', 'Latency of requests to an upstream', 'histogram',
    perUpstream((values, tally, labels) => histogram(values, 'mcp_edge_upstream_duration_seconds', tally, labels)))
  const statusGauge = (name: string, help: string, aggregator: 'min' | 'sum', value: (status: UpstreamStatus) => number | undefined): void => {
    new Gauge({
      name,
      help,
      labelNames: ['route', 'upstream'] as const,
      registers: [registry],
      aggregator,
      collect() {
        this.reset()
        for (const [route, statuses] of upstreams()) {
          for (const status of statuses) {
            const measured = value(status)
            if (measured !== undefined) this.set({ route, upstream: status.name }, measured)
          }
        }
      },
    })
  }
  statusGauge('mcp_edge_upstream_up', 'Whether the upstream is reachable (1) or not (0); over workers, the least', 'min', (status) => (status.state === 'up' ? 1 : 0))
  statusGauge('mcp_edge_upstream_reconnects_total', 'Times the upstream came back after being down', 'sum', (status) => status.reconnects)
  statusGauge('mcp_edge_upstream_stdio_children', 'Running children of a stdio upstream\'s pool', 'sum', (status) => status.children)
  statusGauge('mcp_edge_upstream_stdio_restarts_total', 'Children of a stdio upstream that died unexpectedly (each replaced with backoff)', 'sum', (status) => status.restarts)
}
