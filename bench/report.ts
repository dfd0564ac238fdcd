/**
 * What a bench run produces: the table on stdout, bench/results/latest.json, docs/bench.md (the
 * markdown the README includes), docs/bench.svg, and the README's bench section when the README has
 * the `<!-- bench:start -->` / `<!-- bench:end -->` markers.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { renderChart } from './chart.ts'
import type { Costs, RedisCost } from './costs.ts'
import type { Fanout } from './fanout.ts'
import type { ProfileSummary } from './profile.ts'
import type { ProxyHop } from './proxy-hop.ts'
import { catalogueTable, type CatalogueCache } from './catalogue-cache.ts'
import type { Soak } from './soak.ts'
import { FASTIFY } from './scenarios.ts'
import { ROOT } from './servers.ts'

export interface ScenarioResult {
  name: string
  label: string
  group: 'baseline' | 'mcp-edge'
  sessions: number
  tool: string
  skipped?: string
  reqPerSec?: number
  p50Ms?: number
  p99Ms?: number
  errors?: number
  requests?: number
  /** CPU the load generator used during the reported run, in % of its core (near 100: the req/s is a floor). */
  loadCpuPct?: number
  /** First failed check, when there were errors. */
  sample?: string
  /** req/s and p99 of each round, when there were several (the row shows the median run). */
  runsReqPerSec?: number[]
  runsP99Ms?: number[]
  /** req/s ÷ raw Fastify's req/s. */
  xFastify?: number
  /** req/s ÷ the compared official-SDK scenario's req/s. */
  xSdk?: number
  sdkPeer?: string
  /** p99 ÷ raw Fastify's p99. */
  p99xFastify?: number
  /** The server's CPU (user + system, every process of it) per request in the reported run, µs. */
  cpuUsPerRequest?: number
  runsCpuUsPerRequest?: number[]
  /** CPU per request ÷ raw Fastify's: what req/s would be, inverted, on a core nothing else wanted. */
  cpuxFastify?: number
}

export interface Target {
  what: string
  target: string
  measured: string
  /** undefined when not measured in this run. */
  pass: boolean | undefined
}

export interface BenchResults {
  generatedAt: string
  environment: Record<string, string | number | boolean>
  scenarios: ScenarioResult[]
  costs: Costs | { skipped: string }
  fanout: Fanout | { skipped: string }
  redisCost: RedisCost | { skipped: string }
  /** The proxy hop at a fixed rate (proxy-hop.ts); absent in results written before it existed. */
  proxyHop?: ProxyHop | { skipped: string }
  /** The list and result caches against the same work uncached (catalogue-cache.ts); absent in results written before it existed. */
  catalogue?: CatalogueCache | { skipped: string }
  targets: Target[]
  profile?: ProfileSummary
  /** `--soak <seconds>`: memory slopes under mixed traffic. */
  soak?: Soak
}

const fmt = (n: number | undefined, digits = 2): string => (n === undefined ? '–' : n.toFixed(digits))
const fmtInt = (n: number | undefined): string => (n === undefined ? '–' : Math.round(n).toLocaleString('en-US'))
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(2)} KB`
const isSkipped = <T extends object>(value: T | { skipped: string }): value is { skipped: string } => 'skipped' in value

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/**
 * `row ÷ reference` for one measure. With several rounds it is the median of the per-round ratios
 * (each round's two runs were minutes apart at most, so a busy neighbour weighs on both alike);
 * with one, the plain quotient.
 */
function ratio(row: number | undefined, reference: number | undefined, rowRuns?: number[], referenceRuns?: number[]): number | undefined {
  if (rowRuns !== undefined && referenceRuns !== undefined && rowRuns.length === referenceRuns.length) {
    return median(rowRuns.map((value, i) => value / referenceRuns[i]!))
  }
  return row === undefined || !reference ? undefined : row / reference
}

/** Fills in the ratio columns from the rows of the same run. */
export function addRatios(results: ScenarioResult[], sdkDefault: string): void {
  const byName = new Map(results.map((row) => [row.name, row]))
  const fastify = byName.get(FASTIFY)
  for (const row of results) {
    if (row.reqPerSec === undefined) continue
    const peer = byName.get(row.sdkPeer ?? sdkDefault)
    const xFastify = ratio(row.reqPerSec, fastify?.reqPerSec, row.runsReqPerSec, fastify?.runsReqPerSec)
    const p99xFastify = ratio(row.p99Ms, fastify?.p99Ms, row.runsP99Ms, fastify?.runsP99Ms)
    const xSdk = ratio(row.reqPerSec, peer?.reqPerSec, row.runsReqPerSec, peer?.runsReqPerSec)
    if (xFastify !== undefined) row.xFastify = xFastify
    if (p99xFastify !== undefined) row.p99xFastify = p99xFastify
    if (xSdk !== undefined) row.xSdk = xSdk
    const cpuxFastify = ratio(row.cpuUsPerRequest, fastify?.cpuUsPerRequest, row.runsCpuUsPerRequest, fastify?.runsCpuUsPerRequest)
    if (cpuxFastify !== undefined) row.cpuxFastify = cpuxFastify
  }
}

export function evaluateTargets(results: BenchResults): Target[] {
  const edge = results.scenarios.find((row) => row.name === 'edge-session')
  const measured = edge?.reqPerSec !== undefined
  const targets: Target[] = [
    {
      what: 'tools/call on an existing session (memory): req/s',
      target: '≥ 0.7 × raw Fastify',
      measured: measured ? `${fmt(edge.xFastify)} ×` : 'not measured',
      pass: edge?.xFastify === undefined ? undefined : edge.xFastify >= 0.7,
    },
    {
      what: 'tools/call on an existing session (memory): p99',
      target: '≤ 2 × raw Fastify p99',
      measured: measured ? `${fmt(edge.p99xFastify)} × (${fmt(edge.p99Ms)} ms)` : 'not measured',
      pass: edge?.p99xFastify === undefined ? undefined : edge.p99xFastify <= 2,
    },
    {
      what: 'tools/call on an existing session (memory): errors',
      target: '0',
      measured: measured ? String(edge.errors) : 'not measured',
      pass: measured ? edge.errors === 0 : undefined,
    },
  ]
  const defaults = results.scenarios.find((row) => row.name === 'edge-default')
  targets.push({
    what: 'default config (info logs): req/s',
    target: '≥ 0.9 × raw Fastify',
    measured: defaults?.xFastify === undefined
      ? 'not measured'
      : `${fmt(defaults.xFastify)} ×${defaults.cpuxFastify === undefined ? '' : ` (server CPU per request ${fmt(defaults.cpuxFastify)} × raw Fastify's)`}`,
    pass: defaults?.xFastify === undefined ? undefined : defaults.xFastify >= 0.9,
  })
  const observed = results.scenarios.find((row) => row.name === 'edge-default-admin')
  targets.push({
    what: 'default config with the admin listener on: req/s',
    target: '≥ 0.9 × raw Fastify',
    measured: observed?.xFastify === undefined ? 'not measured' : `${fmt(observed.xFastify)} ×`,
    pass: observed?.xFastify === undefined ? undefined : observed.xFastify >= 0.9,
  })
  const stateless = results.scenarios.find((row) => row.name === 'edge-stateless')
  targets.push({
    what: 'stateless 2026-07-28 tools/call: req/s',
    target: '≥ 0.7 × raw Fastify',
    measured: stateless?.xFastify === undefined ? 'not measured' : `${fmt(stateless.xFastify)} ×`,
    pass: stateless?.xFastify === undefined ? undefined : stateless.xFastify >= 0.7,
  })
  // Access control costs what it costs next to the same row without it, measured in the same run.
  const jwt = results.scenarios.find((row) => row.name === 'edge-jwt')
  const jwtRatio = ratio(jwt?.reqPerSec, edge?.reqPerSec, jwt?.runsReqPerSec, edge?.runsReqPerSec)
  targets.push({
    what: 'JWT auth on (RS256, cached JWKS, scope checks): req/s',
    target: '≥ 0.8 × the same row without auth',
    measured: jwtRatio === undefined ? 'not measured' : `${fmt(jwtRatio)} ×`,
    pass: jwtRatio === undefined ? undefined : jwtRatio >= 0.8,
  })
  const redis = results.scenarios.find((row) => row.name === 'edge-redis')
  // The redis row spreads its load over 50 sessions: compare it with the memory store's 50-session row.
  const memory = results.scenarios.find((row) => row.name === 'edge-50-sessions')
  const redisRatio = ratio(redis?.reqPerSec, memory?.reqPerSec, redis?.runsReqPerSec, memory?.runsReqPerSec)
  targets.push({
    what: 'redis store req/s (50 sessions)',
    target: '≥ 0.6 × memory store',
    measured: redisRatio === undefined ? 'not measured' : `${fmt(redisRatio)} ×`,
    pass: redisRatio === undefined ? undefined : redisRatio >= 0.6,
  })
  // Limits on the hot path, against the same load with every limit off (both 50 sessions, same run).
  const limitsOff = results.scenarios.find((row) => row.name === 'edge-limits-off')
  for (const [name, what, goal] of [['edge-rate-limit', 'rate limit on (two rules)', 0.8], ['edge-50-sessions', 'default quotas on', 0.9]] as const) {
    const row = results.scenarios.find((scenario) => scenario.name === name)
    const limitRatio = ratio(row?.reqPerSec, limitsOff?.reqPerSec, row?.runsReqPerSec, limitsOff?.runsReqPerSec)
    targets.push({
      what: `${what}: req/s (50 sessions, memory)`,
      target: `≥ ${goal} × limits off`,
      measured: limitRatio === undefined ? 'not measured' : `${fmt(limitRatio)} ×`,
      pass: limitRatio === undefined ? undefined : limitRatio >= goal,
    })
  }
  // The phase chain (issue 28): a filter module with the audit record on, and the rewrite phase, each
  // against edge-session measured in the same run.
  for (const [name, what] of [['edge-filter-audit', 'a filter module + the audit record on'], ['edge-rewrite', 'the rewrite phase on']] as const) {
    const row = results.scenarios.find((scenario) => scenario.name === name)
    const phaseRatio = ratio(row?.reqPerSec, edge?.reqPerSec, row?.runsReqPerSec, edge?.runsReqPerSec)
    targets.push({
      what: `${what}: tools/call req/s (1 session)`,
      target: '≥ 0.9 × the same route without them',
      measured: phaseRatio === undefined ? 'not measured' : `${fmt(phaseRatio)} ×`,
      pass: phaseRatio === undefined ? undefined : phaseRatio >= 0.9,
    })
  }
  const { costs, fanout, redisCost } = results
  const catalogue = results.catalogue ?? { skipped: 'not run' }
  targets.push({
    what: 'warm aggregated tools/list (3 upstreams, list cache) against uncached',
    target: '≥ 5 × the uncached lists/s',
    measured: isSkipped(catalogue) ? 'not measured' : `${fmt(catalogue.listSpeedup)} × (${fmtInt(catalogue.rows[1]!.opsPerS)} against ${fmtInt(catalogue.rows[0]!.opsPerS)} lists/s)`,
    pass: isSkipped(catalogue) ? undefined : catalogue.listSpeedup >= 5,
  })
  const hop = results.proxyHop ?? { skipped: 'not run' }
  const hopAt = isSkipped(hop) ? '' : ` at ${fmtInt(hop.rate)} req/s`
  targets.push(
    {
      what: `proxy route to an HTTP upstream: the gateway's CPU per call${hopAt}`,
      target: '≤ 1.5 × a local tools/call',
      measured: isSkipped(hop) ? 'not measured' : `${fmt(hop.cpuRatio)} × (${fmtInt(hop.proxied.cpuUsPerCall)} µs against ${fmtInt(hop.direct.cpuUsPerCall)} µs)`,
      pass: isSkipped(hop) ? undefined : hop.cpuRatio <= 1.5,
    },
    {
      what: `proxy route to an HTTP upstream: added p50${hopAt}`,
      target: '≤ 1 ms',
      measured: isSkipped(hop) ? 'not measured' : `${fmt(hop.addedP50Ms)} ms (${fmt(hop.proxied.p50Ms)} against ${fmt(hop.direct.p50Ms)} ms)`,
      pass: isSkipped(hop) ? undefined : hop.addedP50Ms <= 1 && hop.proxied.errors === 0,
    },
    {
      what: 'proxy route: upstream initialize calls beyond one per session',
      target: '0',
      measured: isSkipped(hop) ? 'not measured' : String(hop.extraInitializes),
      pass: isSkipped(hop) ? undefined : hop.extraInitializes === 0,
    },
  )
  targets.push({
    what: 'idle session in Redis',
    target: '≤ 0.6 KiB',
    measured: isSkipped(redisCost) ? 'not measured' : `${fmtInt(redisCost.bytesPerSession)} B`,
    pass: isSkipped(redisCost) ? undefined : redisCost.bytesPerSession <= 614,
  })
  targets.push(
    {
      what: 'idle session, process memory (RSS)',
      target: '≤ 1.5 KB',
      measured: isSkipped(costs) ? 'not measured' : `${kb(costs.rssPerSessionB)} (heap ${kb(costs.heapPerSessionB)})`,
      pass: isSkipped(costs) ? undefined : costs.rssPerSessionB <= 1536,
    },
    {
      what: 'heap retained per request after a forced GC',
      target: '~0 (< 8 B)',
      measured: isSkipped(costs) ? 'not measured' : `${fmt(costs.retainedHeapPerRequestB, 1)} B`,
      pass: isSkipped(costs) ? undefined : costs.retainedHeapPerRequestB < 8,
    },
    {
      what: `resourceUpdated fan-out to ${isSkipped(fanout) ? '1,000' : fmtInt(fanout.sessions)} subscribed sessions`,
      target: '≤ 250 ms',
      measured: isSkipped(fanout) ? 'not measured' : `${fmt(fanout.medianMs, 1)} ms median, ${fmt(fanout.maxMs, 1)} ms max`,
      pass: isSkipped(fanout) ? undefined : fanout.medianMs <= 250,
    },
  )
  // "~0": a leak of 100 bytes per request at this machine's few hundred requests a second would be
  // over 1 MiB a minute; these bounds leave room for the allocator's and V8's slow settling.
  const { soak } = results
  const perMin = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB/min`
  targets.push(
    {
      what: 'soak: heap slope after forced GCs (npm run bench -- --soak 600)',
      target: `~0 (≤ ${perMin(SOAK_HEAP_SLOPE)})`,
      measured: soak === undefined ? 'not measured' : `${perMin(soak.heapSlopeBPerMin)} over ${soak.seconds} s`,
      pass: soak === undefined ? undefined : soak.heapSlopeBPerMin <= SOAK_HEAP_SLOPE && soak.errors === 0,
    },
    {
      what: 'soak: RSS slope',
      target: `~0 (≤ ${perMin(SOAK_RSS_SLOPE)})`,
      measured: soak === undefined ? 'not measured' : `${perMin(soak.rssSlopeBPerMin)} over ${soak.seconds} s, ${soak.semiSpaceMiB === undefined ? 'young generation sized by V8' : `young generation pinned at 2 × ${soak.semiSpaceMiB} MiB`}`,
      pass: soak === undefined ? undefined : soak.rssSlopeBPerMin <= SOAK_RSS_SLOPE && soak.errors === 0,
    },
  )
  return targets
}

/** Bounds of the soak's slopes, bytes per minute. */
const SOAK_HEAP_SLOPE = 64 * 1024
const SOAK_RSS_SLOPE = 512 * 1024

/** A load generator above this share of its core may be what limits the run. */
const LOAD_SATURATED_PCT = 85

function maxLoadCpu(results: BenchResults): number | undefined {
  const loadCpu = results.scenarios.map((row) => row.loadCpuPct).filter((pct): pct is number => pct !== undefined)
  return loadCpu.length === 0 ? undefined : Math.max(...loadCpu)
}

/** A note naming the rows whose load generator was near saturation, or undefined. */
function saturationNote(results: BenchResults): string | undefined {
  const saturated = results.scenarios.filter((row) => (row.loadCpuPct ?? 0) >= LOAD_SATURATED_PCT)
  if (saturated.length === 0) return undefined
  return `the load generator (wrk, or ws-load for WebSocket) used ≥ ${LOAD_SATURATED_PCT}% of its core in: ${saturated.map((row) => `${row.label} (${row.loadCpuPct}%)`).join(', ')}; their req/s is a floor, not the server's limit`
}

const verdict = (pass: boolean | undefined): string => (pass === undefined ? '–' : pass ? 'PASS' : 'FAIL')

/**
 * The proxy's CPU per call at saturation (wrk, one session): the edge-proxy-http row's server CPU
 * per request ÷ edge-session's. Reported beside the paced figure (the target's), not instead of it:
 * at saturation each wake-up serves many requests, so it weighs the per-request work without the
 * per-wake-up cost a paced load pays once per request (and a proxied call twice).
 */
function saturatedProxyLine(results: BenchResults): string | undefined {
  const proxied = results.scenarios.find((row) => row.name === 'edge-proxy-http')?.cpuUsPerRequest
  const local = results.scenarios.find((row) => row.name === 'edge-session')?.cpuUsPerRequest
  if (proxied === undefined || local === undefined) return undefined
  return `${fmtInt(proxied)} µs CPU per proxied call against ${fmtInt(local)} µs per local call, ${fmt(proxied / local)} ×`
}

/** The token-exchange row against the static-headers row, both JWT callers through one proxy hop (target ≤ 1.1×). */
function tokenExchangeLine(results: BenchResults): string | undefined {
  const exchanged = results.scenarios.find((row) => row.name === 'edge-proxy-http-token-exchange')?.cpuUsPerRequest
  const fixed = results.scenarios.find((row) => row.name === 'edge-proxy-http-jwt-static')?.cpuUsPerRequest
  if (exchanged === undefined || fixed === undefined) return undefined
  return `${fmtInt(exchanged)} µs CPU per proxied call with token exchange (cached) against ${fmtInt(fixed)} µs with static headers, ${fmt(exchanged / fixed)} × (target ≤ 1.1 ×)`
}

/** One line on the proxy hop: both paced runs and what the hop adds. */
function hopLine(hop: ProxyHop): string {
  const run = (r: ProxyHop['direct']): string => `p50 ${fmt(r.p50Ms)} ms, p99 ${fmt(r.p99Ms)} ms, ${fmtInt(r.cpuUsPerCall)} µs CPU/call, ${r.errors} errors`
  return `${fmtInt(hop.rate)} req/s for ${hop.seconds} s over ${hop.sessions} sessions: upstream directly ${run(hop.direct)}; through the proxy route ${run(hop.proxied)}` +
    `; added p50 ${fmt(hop.addedP50Ms)} ms, CPU ${fmt(hop.cpuRatio)} ×${hop.roundRatios === undefined ? '' : ` (median of ${hop.roundRatios.length} paired rounds: ${hop.roundRatios.map((value) => fmt(value)).join(', ')})`}, ${hop.extraInitializes} extra upstream initialize`
}

/** The table printed at the end of a run. */
export function formatTable(results: BenchResults): string {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors', '×Fastify', '×SDK', 'p99×Fastify', 'CPU µs/req', 'CPU×Fastify']
  const rows = results.scenarios.map((row) =>
    row.skipped !== undefined
      ? [row.label, `skipped: ${row.skipped}`]
      : [row.label, fmtInt(row.reqPerSec), fmt(row.p50Ms), fmt(row.p99Ms), String(row.errors), fmt(row.xFastify), fmt(row.xSdk), fmt(row.p99xFastify), fmt(row.cpuUsPerRequest, 1), fmt(row.cpuxFastify)],
  )
  const width = Math.max(...rows.map((row) => row[0]!.length), header[0]!.length)
  const line = (cells: string[]): string =>
    cells.length === 2
      ? `${cells[0]!.padEnd(width)}  ${cells[1]}`
      : cells.map((cell, i) => (i === 0 ? cell.padEnd(width) : cell.padStart(i === 1 ? 9 : 8))).join('  ')
  const out = [line(header), '-'.repeat(width + 90), ...rows.map(line), '']
  if (maxLoadCpu(results) !== undefined) out.push(`the load generator used at most ${maxLoadCpu(results)}% of its core`)
  const saturated = saturationNote(results)
  if (saturated !== undefined) out.push(`warning: ${saturated}`)
  const { costs, fanout } = results
  if (isSkipped(costs)) out.push(`costs: skipped (${costs.skipped})`)
  else {
    out.push(
      `costs (memory store): ${fmtInt(costs.sessions)} idle sessions: ${kb(costs.rssPerSessionB)} RSS and ${kb(costs.heapPerSessionB)} heap each;` +
        ` created in ${fmtInt(costs.createMs)} ms (${fmtInt((costs.sessions / costs.createMs) * 1000)}/s);` +
        ` heap retained per request ${fmt(costs.retainedHeapPerRequestB, 1)} B over ${fmtInt(costs.requests)} requests`,
    )
  }
  const { redisCost } = results
  if (isSkipped(redisCost)) out.push(`bytes per idle session in Redis: skipped (${redisCost.skipped})`)
  else out.push(`redis store: ${fmtInt(redisCost.bytesPerSession)} B of Redis used_memory per idle session (${fmtInt(redisCost.sessions)} sessions)`)
  const hop = results.proxyHop ?? { skipped: 'not run' }
  out.push(isSkipped(hop) ? `proxy hop: skipped (${hop.skipped})` : `proxy hop: ${hopLine(hop)}`)
  const catalogue = results.catalogue ?? { skipped: 'not run' }
  out.push(isSkipped(catalogue) ? `list and result caches: skipped (${catalogue.skipped})` : `list and result caches (catalogue-cache.ts):\n${catalogueTable(catalogue)}`)
  const saturatedProxy = saturatedProxyLine(results)
  if (saturatedProxy !== undefined) out.push(`proxy route at saturation (wrk, 1 session): ${saturatedProxy}`)
  const exchange = tokenExchangeLine(results)
  if (exchange !== undefined) out.push(`upstream token exchange: ${exchange}`)
  if (isSkipped(fanout)) out.push(`fan-out: skipped (${fanout.skipped})`)
  else out.push(`fan-out: resourceUpdated reached ${fmtInt(fanout.sessions)} open GET streams in ${fmt(fanout.medianMs, 1)} ms median, ${fmt(fanout.maxMs, 1)} ms max (${fanout.rounds} rounds)`)
  out.push('', 'targets:')
  for (const target of results.targets) out.push(`  ${verdict(target.pass).padEnd(4)}  ${target.what}: ${target.measured} (target ${target.target})`)
  return out.join('\n')
}

/** The markdown of docs/bench.md; `image` is the chart's path as seen from where the markdown lives. */
export function formatMarkdown(results: BenchResults, image: string): string {
  const env = results.environment
  const out = [
    '<!-- Generated by `npm run bench` (bench/report.ts): edit the generator, not this file. -->',
    '## Benchmarks',
    '',
    `![req/s and p99 per scenario](${image})`,
    '',
    '| Scenario | req/s | p50 ms | p99 ms | errors | × raw Fastify | × official SDK | p99 × raw Fastify | server CPU µs/req | CPU × raw Fastify |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ]
  for (const row of results.scenarios) {
    out.push(
      row.skipped !== undefined
        ? `| ${row.label} | skipped: ${row.skipped} | | | | | | | | |`
        : `| ${row.label} | ${fmtInt(row.reqPerSec)} | ${fmt(row.p50Ms)} | ${fmt(row.p99Ms)} | ${row.errors} | ${fmt(row.xFastify)} | ${fmt(row.xSdk)} | ${fmt(row.p99xFastify)} | ${fmt(row.cpuUsPerRequest, 1)} | ${fmt(row.cpuxFastify)} |`,
    )
  }
  const { costs, fanout } = results
  out.push('', '| Cost (mcp-edge, memory store) | Measured |', '|---|--:|')
  if (isSkipped(costs)) out.push(`| all | skipped: ${costs.skipped} |`)
  else {
    out.push(
      `| RSS per idle session (${fmtInt(costs.sessions)} sessions) | ${kb(costs.rssPerSessionB)} |`,
      `| heap per idle session | ${kb(costs.heapPerSessionB)} |`,
      `| time to create ${fmtInt(costs.sessions)} sessions (50 concurrent) | ${fmtInt(costs.createMs)} ms |`,
      `| heap retained per request after a forced GC (${fmtInt(costs.requests)} requests) | ${fmt(costs.retainedHeapPerRequestB, 1)} B |`,
    )
  }
  const { redisCost } = results
  out.push(
    isSkipped(redisCost)
      ? `| bytes per idle session in Redis | skipped: ${redisCost.skipped} |`
      : `| bytes per idle session in Redis (used_memory, ${fmtInt(redisCost.sessions)} sessions) | ${fmtInt(redisCost.bytesPerSession)} B |`,
  )
  const hop = results.proxyHop ?? { skipped: 'not run' }
  out.push(isSkipped(hop) ? `| proxy hop at a fixed rate | skipped: ${hop.skipped} |` : `| proxy hop (proxy-hop.ts) | ${hopLine(hop)} |`)
  const cached = results.catalogue ?? { skipped: 'not run' }
  if (isSkipped(cached)) out.push(`| list and result caches | skipped: ${cached.skipped} |`)
  else {
    for (const row of cached.rows) out.push(`| ${row.name} (catalogue-cache.ts) | ${fmtInt(row.opsPerS)} ops/s, p50 ${fmt(row.p50Ms)} ms, p99 ${fmt(row.p99Ms)} ms, ${fmtInt(row.cpuUsPerOp)} µs CPU/op, ${fmt(row.upstreamPerOp)} upstream requests/op, load generator at ${row.loadCpuPct ?? '?'}% of its core |`)
    out.push(`| warm list ÷ uncached; cached result ÷ uncached call | ${fmt(cached.listSpeedup)} ×; ${fmt(cached.callSpeedup)} × |`)
  }
  const saturatedProxy = saturatedProxyLine(results)
  if (saturatedProxy !== undefined) out.push(`| proxy route at saturation (wrk, 1 session; not the target's measure) | ${saturatedProxy} |`)
  const exchange = tokenExchangeLine(results)
  if (exchange !== undefined) out.push(`| upstream token exchange, cached (wrk, 1 session) | ${exchange} |`)
  out.push(
    isSkipped(fanout)
      ? `| resourceUpdated fan-out | skipped: ${fanout.skipped} |`
      : `| resourceUpdated fan-out to ${fmtInt(fanout.sessions)} sessions with open GET streams | ${fmt(fanout.medianMs, 1)} ms median, ${fmt(fanout.maxMs, 1)} ms max |`,
  )
  out.push('', '| Target | Goal | Measured | |', '|---|---|---|---|')
  for (const target of results.targets) out.push(`| ${target.what} | ${target.target} | ${target.measured} | ${verdict(target.pass)} |`)
  out.push(
    '',
    `Measured ${results.generatedAt.slice(0, 10)} on ${env.cpu} (${env.cpus}), Node ${env.node}, wrk -t${env.wrkThreads} -c${env.connections} -d${env.durationS}s` +
      `${Number(env.rounds) > 1 ? ` in ${env.rounds} rounds (each row its median run; ratios the median of the per-round ratios)` : ''}` +
      `${Number(env.slices) > 1 ? `, rows compared with each other measured in ${env.slices} turns each` : ''}` +
      ` after a ${env.warmupS} s warm-up; load average ${env.loadAverage} at the start.` +
      `${maxLoadCpu(results) === undefined ? '' : ` The load generator (wrk; ws-load.ts for WebSocket) used at most ${maxLoadCpu(results)}% of its core.`}` +
      ' Every answer is checked (status, JSON-RPC id, echo text, progress count); see bench/README.md for the method.',
    '',
  )
  const saturated = saturationNote(results)
  if (saturated !== undefined) out.push(`**Load generator near saturation**: ${saturated}.`, '')
  if (env.busy === true) {
    out.push('**The machine was busy during this run** (see the load average): absolute numbers are low and the ratios noisy.', '')
  }
  out.push(PROXY_INSTRUCTIONS, '')
  return out.join('\n')
}

/** How the proxy hop's own work is measured where CPU time is too noisy (a fixed text: not this run's figures). */
const PROXY_INSTRUCTIONS =
  '**The proxy hop in instructions.** On a shared machine the proxy row\'s CPU ratio moves by more than a change to the proxy path ' +
  'can, so such changes are measured in instructions per call under callgrind: `npx tsx bench/callgrind-proxy.ts proxied` ' +
  '(and `direct`, the upstream serving the same call itself), one call in flight after a warm-up. Instructions leave out ' +
  'kernel time, most of what the hop adds (a second socket write and read, the wake-ups), so their ratio stays under this ' +
  'table\'s; method and figures in bench/README.md ("Instruction counts, repeatable").'

/**
 * Writes the outputs; returns the files written. A partial run (BENCH_ONLY) writes only
 * bench/results/partial.json, so it never replaces the full results the docs show.
 */
export function writeOutputs(results: BenchResults, partial: boolean): string[] {
  const resultsDir = path.join(ROOT, 'bench/results')
  const docsDir = path.join(ROOT, 'docs')
  mkdirSync(resultsDir, { recursive: true })
  if (partial) {
    const file = path.join(resultsDir, 'partial.json')
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
    return [file]
  }
  mkdirSync(docsDir, { recursive: true })
  const written = [path.join(resultsDir, 'latest.json'), path.join(docsDir, 'bench.md'), path.join(docsDir, 'bench.svg')]
  writeFileSync(written[0]!, `${JSON.stringify(results, null, 2)}\n`)
  writeFileSync(written[1]!, formatMarkdown(results, 'bench.svg'))
  const rows = results.scenarios.map((row) => ({
    label: row.label,
    group: row.group,
    ceiling: row.name === FASTIFY,
    ...(row.reqPerSec === undefined ? {} : { reqPerSec: row.reqPerSec, p99Ms: row.p99Ms!, errors: row.errors! }),
    ...(row.skipped === undefined ? {} : { skipped: row.skipped }),
  }))
  const env = results.environment
  const caption = `mcp-edge bench ${results.generatedAt.slice(0, 10)} · ${env.cpu} · ${env.cpus} · Node ${env.node} · wrk -c${env.connections} -d${env.durationS}s`
  writeFileSync(written[2]!, renderChart(rows, caption))

  const readme = path.join(ROOT, 'README.md')
  if (existsSync(readme)) {
    const text = readFileSync(readme, 'utf8')
    const start = text.indexOf('<!-- bench:start -->')
    const end = text.indexOf('<!-- bench:end -->')
    if (start >= 0 && end > start) {
      const section = formatMarkdown(results, 'docs/bench.svg').replace(/^<!--.*-->\n/, '')
      writeFileSync(readme, `${text.slice(0, start)}<!-- bench:start -->\n${section}${text.slice(end)}`)
      written.push(readme)
    }
  }
  return written
}
