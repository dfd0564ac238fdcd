/**
 * Prometheus metrics (prom-client) at `metrics.path` (default /metrics):
 *
 *   mcp_edge_requests_total{route, method, status}        MCP requests over HTTP, by JSON-RPC method
 *   mcp_edge_request_duration_seconds{route, method}      their duration, to the response (or the stream's end)
 *   mcp_edge_sessions{route}                              live sessions (from the store, shared by every worker)
 *   mcp_edge_open_streams                                 SSE connections this process holds
 *   + the calls' and upstreams' metrics (events/call-metrics.ts names them)
 *   + Node's process metrics (CPU, memory, event loop lag, GC)
 *
 * Under the cluster (`workers` > 1) a scrape reaches one worker, which asks the primary; the primary
 * gathers every worker's registry (prom-client's AggregatorRegistry) and sums them, so one scrape
 * sees the whole host. The sessions gauge is the store's count, so workers report it alike: it is
 * aggregated with `max`, not summed.
 *
 * Recording is on every request's path, so it is plain arithmetic on numbers kept per route, method
 * and status (no label hashing, no allocation); the scrape turns them into prom-client metrics.
 *
 * Every label value comes from a fixed set, never from the client: `route` is a configured location,
 * `status` an HTTP status the gateway chose, and `method` one of the MCP methods below, anything else
 * `other`. A client that invents methods cannot grow the scrape (each unique value would be a series).
 */
import cluster from 'node:cluster'
import { AggregatorRegistry, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import type { SessionStore } from '../store/store.ts'
import type { CallEvents } from '../events/call-events.ts'
import { registerCallMetrics, scrapedMetric, type MetricValue, type UpstreamSource } from '../events/call-metrics.ts'

/** The `method` label of a request whose method is not one of KNOWN_METHODS. */
export const OTHER_METHOD = 'other'

/** The methods a client sends (requests and notifications) under their own label; 'response' is a client's answer. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'initialize', 'ping', 'response',
  'tools/list', 'tools/call',
  'prompts/list', 'prompts/get',
  'resources/list', 'resources/templates/list', 'resources/read', 'resources/subscribe', 'resources/unsubscribe',
  'completion/complete', 'logging/setLevel',
  'server/discover', 'subscriptions/listen',
  'notifications/initialized', 'notifications/cancelled', 'notifications/progress', 'notifications/roots/list_changed',
  'notifications/elicitation/complete',
])

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export interface GatewayMetrics {
  readonly registry: Registry
  /** The recorder of one route's requests. */
  route(location: string): RouteMetrics
  /** The exposition text: this process's, or under the cluster the whole host's (asked of the primary). */
  scrape(): Promise<string>
  readonly contentType: string
}

export interface RouteMetrics {
  /** Records one finished request; a method outside the known set is counted as `other`. */
  observe(method: string, status: number, seconds: number): void
}

/** One route's counts for one method: per status, and the duration histogram. */
interface MethodTally {
  byStatus: Map<number, { count: number }>
  /** The status of the last request counted, and its count: the next request most often has it too. */
  lastStatus: number
  lastCount: { count: number } | undefined
  /** Cumulative-free bucket counts (index i: durations ≤ DURATION_BUCKETS[i]; the last: above all). */
  buckets: Float64Array
  count: number
  sumSeconds: number
}

export function createMetrics(options: { routes: readonly string[]; store: SessionStore; openStreams: () => number; calls?: { events: () => CallEvents; upstreams: UpstreamSource } }): GatewayMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'mcp_edge_' })
  if (options.calls !== undefined) registerCallMetrics(registry, options.calls.events, options.calls.upstreams)
  const tallies = new Map<string, Map<string, MethodTally>>()
  scrapedMetric(registry, 'mcp_edge_requests_total', 'MCP requests over HTTP, by route, JSON-RPC method and HTTP status', 'counter', () => {
    const values: MetricValue[] = []
    for (const [route, methods] of tallies) {
      for (const [method, tally] of methods) {
        for (const [status, { count }] of tally.byStatus) values.push({ value: count, labels: { route, method, status } })
      }
    }
    return values
  })
  scrapedMetric(registry, 'mcp_edge_request_duration_seconds', 'Duration of MCP requests over HTTP, until the response ended', 'histogram', () => {
    const values: MetricValue[] = []
    for (const [route, methods] of tallies) {
      for (const [method, tally] of methods) {
        let cumulative = 0
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += tally.buckets[i]!
          values.push({ metricName: 'mcp_edge_request_duration_seconds_bucket', value: cumulative, labels: { route, method, le } })
        })
        values.push({ metricName: 'mcp_edge_request_duration_seconds_bucket', value: tally.count, labels: { route, method, le: '+Inf' } })
        values.push({ metricName: 'mcp_edge_request_duration_seconds_sum', value: tally.sumSeconds, labels: { route, method } })
        values.push({ metricName: 'mcp_edge_request_duration_seconds_count', value: tally.count, labels: { route, method } })
      }
    }
    return values
  })
  new Gauge({
    name: 'mcp_edge_sessions',
    help: 'Live sessions per route (the shared store\'s count)',
    labelNames: ['route'] as const,
    registers: [registry],
    aggregator: 'max',
    async collect() {
      for (const route of options.routes) {
        const count = await options.store.count(route).catch(() => undefined)
        if (count !== undefined) this.set({ route }, count)
      }
    },
  })
  new Gauge({
    name: 'mcp_edge_open_streams',
    help: 'SSE connections this process holds (POST streams and GET streams)',
    registers: [registry],
    collect() {
      this.set(options.openStreams())
    },
  })

  const worker = cluster.isWorker && process.send !== undefined
  if (worker) {
    // Makes this worker answer the primary's gathering with this registry.
    new AggregatorRegistry()
    AggregatorRegistry.setRegistries(registry)
  }

  return {
    registry,
    contentType: registry.contentType,
    route(location) {
      const methods = new Map<string, MethodTally>()
      tallies.set(location, methods)
      // The method of the last request and its tally: a route's requests mostly repeat one method,
      // and the three lookups (label, tally, status: ~250 instructions a request) are then skipped.
      let lastMethod: string | undefined
      let lastTally: MethodTally | undefined
      return {
        observe(method, status, seconds) {
          let tally = method === lastMethod ? lastTally : undefined
          if (tally === undefined) {
            const label = KNOWN_METHODS.has(method) ? method : OTHER_METHOD
            tally = methods.get(label)
            if (tally === undefined) {
              tally = { byStatus: new Map(), lastStatus: -1, lastCount: undefined, buckets: new Float64Array(DURATION_BUCKETS.length + 1), count: 0, sumSeconds: 0 }
              methods.set(label, tally)
            }
            // Only a known method is kept: a client's invented ones are not held here.
            lastMethod = label === method ? method : undefined
            lastTally = tally
          }
          let counted = status === tally.lastStatus ? tally.lastCount : undefined
          if (counted === undefined) {
            counted = tally.byStatus.get(status)
            if (counted === undefined) tally.byStatus.set(status, (counted = { count: 0 }))
            tally.lastStatus = status
            tally.lastCount = counted
          }
          counted.count++
          let bucket = 0
          while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++
          tally.buckets[bucket]!++
          tally.count++
          tally.sumSeconds += seconds
        },
      }
    },
    scrape: () => (worker ? askPrimary() : registry.metrics()),
  }
}

/** The message a worker sends for the host's metrics, and the primary's answer. */
export interface MetricsRequest { mcpEdgeMetrics: 'request'; id: number }
export interface MetricsReply { mcpEdgeMetrics: 'reply'; id: number; text?: string; error?: string }

let requestSeq = 0
const waiting = new Map<number, (reply: MetricsReply) => void>()

function askPrimary(): Promise<string> {
  if (waiting.size === 0) process.on('message', onReply)
  const id = ++requestSeq
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => settle({ mcpEdgeMetrics: 'reply', id, error: 'the primary did not answer within 10 s' }), 10_000)
    const settle = (reply: MetricsReply): void => {
      clearTimeout(timer)
      waiting.delete(id)
      if (waiting.size === 0) process.off('message', onReply)
      if (reply.text !== undefined) resolve(reply.text)
      else reject(new Error(reply.error ?? 'no metrics'))
    }
    waiting.set(id, settle)
    process.send!({ mcpEdgeMetrics: 'request', id } satisfies MetricsRequest)
  })
}

function onReply(message: unknown): void {
  const reply = message as Partial<MetricsReply> | null
  if (reply?.mcpEdgeMetrics === 'reply' && typeof reply.id === 'number') waiting.get(reply.id)?.(reply as MetricsReply)
}

/** On the cluster primary: answers workers' metrics requests with every worker's metrics, aggregated. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker, message: unknown) => {
    const request = message as Partial<MetricsRequest> | null
    if (request?.mcpEdgeMetrics !== 'request' || typeof request.id !== 'number') return
    const id = request.id
    aggregator.clusterMetrics().then(
      (text) => worker.send({ mcpEdgeMetrics: 'reply', id, text } satisfies MetricsReply),
      (error: unknown) => worker.send({ mcpEdgeMetrics: 'reply', id, error: (error as Error).message } satisfies MetricsReply),
    )
  })
}
