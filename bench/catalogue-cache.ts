/**
 * The list cache and the result cache (docs/catalogues.md), against the same work uncached: `npm run
 * bench` part `catalogue`, or on its own:
 *
 *   node --import tsx bench/catalogue-cache.ts                  # 10 s per row (5 turns of 2 s) after 3 s of warm-up
 *   BENCH_DURATION=20 BENCH_SLICES=10 node --import tsx bench/catalogue-cache.ts
 *   node --import tsx bench/catalogue-cache.ts --cpu-prof       # also a CPU profile of the cached gateway's busiest functions
 *
 *   wrk (C, load core; 20 sessions made first, 50 connections) ─► gateway "uncached": a proxy route, 3 upstreams, list_cache: false
 *                                                              └► gateway "cached":   the same route, list cache on, lookup's results cached
 *                        each (server core) ──► the same upstream process (mcp-edge, bench handler) ×3 names
 *
 * Rows: tools/list of the 3-upstream route uncached, then warm (target ≥ 5× the uncached lists/s);
 * tools/call of the read-only `lookup` through the route, uncached, then answered from the result
 * cache (the same arguments every time). The two rows of each pair are measured in turns (as
 * run.ts's turn groups are), so a busy neighbour slows both alike. Every answer is checked by wrk's
 * script (its id; a list holds the last upstream's last tool, a call the echo). Each row: ops/s,
 * p50, p99, the gateway's CPU per op and the upstream's (utime + stime from /proc), the upstream
 * requests per op (its /metrics: 0 when the cache answers), and the load generator's share of its
 * core (near 100%: the row measured wrk, not the gateway).
 */
import { mkdtempSync, readdirSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { pinSelfToLoadCore, processTreeCpuUs } from './cpu.ts'
import { McpHttp, pool } from './mcp-http.ts'
import { formatProfile, summariseProfile } from './profile.ts'
import { startServer, type RunningServer } from './servers.ts'
import { runWrk, type WrkLoad, type WrkResult } from './wrk.ts'

export interface CatalogueRow {
  name: string
  opsPerS: number
  p50Ms: number
  p99Ms: number
  cpuUsPerOp: number
  /** The upstream process's CPU per op: what the uncached rows add on the server core. */
  upstreamCpuUsPerOp: number
  upstreamPerOp: number
  /** wrk's CPU over the row, % of its core (mean of the turns). */
  loadCpuPct: number | undefined
  errors: number
}
export interface CatalogueCache { rows: CatalogueRow[]; listSpeedup: number; callSpeedup: number; sessions: number; seconds: number; loadAverage?: number[] }

const UPSTREAMS = ['u1', 'u2', 'u3']
/** The bench handler has 4 tools (echo, echo_progress, lookup, touch); each upstream name lists them all, u3's last. */
const LAST_TOOL = '"name":"u3__touch"'
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const SLICES = Math.max(1, Number(process.env.BENCH_SLICES ?? 5))

/** Requests the upstream answered so far (every method), from its /metrics. */
async function upstreamRequests(upstream: RunningServer): Promise<number> {
  const text = await (await fetch(new URL('/metrics', upstream.url))).text()
  let count = 0
  for (const line of text.split('\n')) if (line.startsWith('mcp_edge_requests_total')) count += Number(line.split(' ').pop())
  return count
}

interface Row { name: string; gateway: RunningServer; sessions: string[]; load: WrkLoad }
interface Slice { wrk: WrkResult; gatewayCpuUs: number; upstreamCpuUs: number; upstreamRequests: number; seconds: number }

let idBase = 1_000_000

async function measure(row: Row, upstream: RunningServer, seconds: number): Promise<Slice> {
  const gatewayBefore = processTreeCpuUs(row.gateway.pid) ?? 0
  const upstreamBefore = processTreeCpuUs(upstream.pid) ?? 0
  const requestsBefore = await upstreamRequests(upstream)
  const wrk = await runWrk({ url: row.gateway.url, sessions: row.sessions, load: row.load, durationS: seconds, connections: CONNECTIONS, threads: 1, idBase: (idBase += 10_000_000) })
  return {
    wrk,
    gatewayCpuUs: (processTreeCpuUs(row.gateway.pid) ?? 0) - gatewayBefore,
    upstreamCpuUs: (processTreeCpuUs(upstream.pid) ?? 0) - upstreamBefore,
    upstreamRequests: (await upstreamRequests(upstream)) - requestsBefore,
    seconds: wrk.reqPerSec > 0 ? wrk.requests / wrk.reqPerSec : seconds,
  }
}

/** The rows of a pair in turns (the first of each turn rotating); each row's slices summed. */
async function inTurns(pair: readonly Row[], upstream: RunningServer, seconds: number): Promise<CatalogueRow[]> {
  for (const row of pair) await runWrk({ url: row.gateway.url, sessions: row.sessions, load: row.load, durationS: Math.min(3, seconds), connections: CONNECTIONS, threads: 1, idBase: (idBase += 10_000_000) })
  const slices = pair.map((): Slice[] => [])
  const sliceS = Math.max(1, Math.round(seconds / SLICES))
  for (let turn = 0; turn < SLICES; turn++) {
    for (let i = 0; i < pair.length; i++) {
      const at = (turn + i) % pair.length
      slices[at]!.push(await measure(pair[at]!, upstream, sliceS))
    }
  }
  return pair.map((row, index) => {
    const runs = slices[index]!
    const sum = (of: (slice: Slice) => number): number => runs.reduce((total, slice) => total + of(slice), 0)
    const ops = sum((slice) => slice.wrk.requests)
    const median = (of: (slice: Slice) => number): number => runs.map(of).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!
    const loads = runs.flatMap((slice) => (slice.wrk.loadCpuPct === undefined ? [] : [slice.wrk.loadCpuPct]))
    return {
      name: row.name,
      opsPerS: ops / sum((slice) => slice.seconds),
      p50Ms: median((slice) => slice.wrk.p50Ms),
      p99Ms: median((slice) => slice.wrk.p99Ms),
      cpuUsPerOp: sum((slice) => slice.gatewayCpuUs) / ops,
      upstreamCpuUsPerOp: sum((slice) => slice.upstreamCpuUs) / ops,
      upstreamPerOp: sum((slice) => slice.upstreamRequests) / ops,
      loadCpuPct: loads.length === 0 ? undefined : Math.round(loads.reduce((a, b) => a + b, 0) / loads.length),
      errors: sum((slice) => slice.wrk.errors),
    }
  })
}

/** `count` sessions on `url`, and one answer of `check` checked by hand before any load. */
async function sessionsOf(url: string, count: number, check: (client: McpHttp, session: string) => Promise<boolean>): Promise<string[]> {
  const client = new McpHttp(url, 20)
  try {
    const sessions = await pool(count, 20, () => client.initialize())
    if (!(await check(client, sessions[0]!))) throw new Error(`${url} answered the check wrongly`)
    return sessions
  } finally {
    client.close()
  }
}

/** Measures the four rows; `seconds` per row. `profileDir`: the cached gateway writes a CPU profile there. */
export async function measureCatalogueCache(seconds: number, sessions = 20, profileDir?: string): Promise<CatalogueCache> {
  const loadAverage = loadavg()
  const upstream = await startServer({ kind: 'edge' }, { logLevel: 'warn' })
  const route = (cached: boolean): Record<string, unknown> => ({
    handler: undefined,
    list_cache: cached ? { ttl_s: 3600 } : false,
    result_cache: { scope: 'public' },
    upstreams: UPSTREAMS.map((name, index) => ({
      name,
      url: upstream.url,
      health_interval: 3600,
      ...(cached && index === 0 ? { tools: { lookup: { cache: { ttl_s: 3600 } } } } : {}),
    })),
  })
  const uncached = await startServer({ kind: 'edge', route: route(false) }, { logLevel: 'warn' })
  const cached = await startServer({ kind: 'edge', route: route(true) }, { logLevel: 'warn', ...(profileDir === undefined ? {} : { cpuProfileDir: profileDir }) })
  try {
    const listed = async (client: McpHttp, session: string): Promise<boolean> => ((await client.request('tools/list', {}, session)).result?.tools as unknown[] | undefined)?.length === UPSTREAMS.length * 4
    const echoed = async (client: McpHttp, session: string): Promise<boolean> => (await client.callTool('u1__lookup', { message: 'same' }, session)) === 'echo: same'
    const list: WrkLoad = { tool: 'echo', list: { expect: LAST_TOOL } }
    const lookup: WrkLoad = { tool: 'u1__lookup', message: 'same' }
    const onUncached = await sessionsOf(uncached.url, sessions, async (client, session) => (await listed(client, session)) && echoed(client, session))
    const onCached = await sessionsOf(cached.url, sessions, async (client, session) => (await listed(client, session)) && echoed(client, session))
    const lists = await inTurns([
      { name: 'tools/list, 3 upstreams, list_cache: false', gateway: uncached, sessions: onUncached, load: list },
      { name: 'tools/list, 3 upstreams, warm list cache', gateway: cached, sessions: onCached, load: list },
    ], upstream, seconds)
    const calls = await inTurns([
      { name: 'tools/call read-only tool through the route, uncached', gateway: uncached, sessions: onUncached, load: lookup },
      { name: 'tools/call read-only tool, cached result (cache: {ttl_s})', gateway: cached, sessions: onCached, load: lookup },
    ], upstream, seconds)
    const rows = [...lists, ...calls]
    return { rows, listSpeedup: rows[1]!.opsPerS / rows[0]!.opsPerS, callSpeedup: rows[3]!.opsPerS / rows[2]!.opsPerS, sessions, seconds, loadAverage }
  } finally {
    await Promise.all([upstream.stop(), uncached.stop(), cached.stop()])
  }
}

/** The rows as a markdown table, with the targets. */
export function catalogueTable(result: CatalogueCache): string {
  const lines = [
    '| Row | ops/s | p50 ms | p99 ms | gateway CPU µs/op | upstream CPU µs/op | upstream requests/op | load generator % of its core | errors |',
    '|---|---|---|---|---|---|---|---|---|',
  ]
  for (const row of result.rows) {
    lines.push(`| ${row.name} | ${row.opsPerS.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.cpuUsPerOp.toFixed(0)} | ${(row.upstreamCpuUsPerOp ?? 0).toFixed(0)} | ${row.upstreamPerOp.toFixed(2)} | ${row.loadCpuPct ?? '?'} | ${row.errors} |`)
  }
  const load = result.loadAverage === undefined ? '' : `; load average ${result.loadAverage.map((n) => n.toFixed(2)).join(' ')} at the start`
  lines.push('', `warm list ÷ uncached list: ${result.listSpeedup.toFixed(1)}× (target ≥ 5×); cached result ÷ uncached call: ${result.callSpeedup.toFixed(1)}×; ${result.sessions} sessions, ${result.seconds} s per row${load}`)
  // On a busy machine the server core is shared by the scheduler, not used up, and lists/s follow each
  // row's share of it (the uncached row runs two processes there); the CPU per list does not.
  const [uncached, warm] = result.rows
  if (uncached !== undefined && warm !== undefined && warm.cpuUsPerOp > 0) {
    const serverCpu = (row: CatalogueRow): number => row.cpuUsPerOp + (row.upstreamCpuUsPerOp ?? 0)
    lines.push(`server-core CPU per list (gateway + upstream): ${serverCpu(uncached).toFixed(0)} µs uncached, ${serverCpu(warm).toFixed(0)} µs warm: ${(serverCpu(uncached) / serverCpu(warm)).toFixed(1)}×, the lists/s ratio of a server core that is used up`)
  }
  return lines.join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  pinSelfToLoadCore()
  const profileDir = process.argv.includes('--cpu-prof') ? mkdtempSync(path.join(tmpdir(), 'mcp-edge-catalogue-prof-')) : undefined
  const result = await measureCatalogueCache(Number(process.env.BENCH_DURATION ?? 10), Number(process.env.BENCH_SESSIONS ?? 20), profileDir)
  console.log(catalogueTable(result))
  if (profileDir !== undefined) {
    const files = readdirSync(profileDir)
    const profile = files.find((file) => file.endsWith('.cpuprofile'))
    const maps = files.find((file) => file.startsWith('sourcemaps-'))
    if (profile !== undefined) console.log(`\nThe cached gateway's profile (${path.join(profileDir, profile)}; every row, not only the warm list):\n${formatProfile(summariseProfile(path.join(profileDir, profile), maps === undefined ? undefined : path.join(profileDir, maps)))}`)
  }
}
