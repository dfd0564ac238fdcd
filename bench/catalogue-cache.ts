/**
 * The list cache and the result cache (docs/catalogues.md), against the same work uncached: `npm run
 * bench` part `catalogue`, or on its own:
 *
 *   node --import tsx bench/catalogue-cache.ts                  # 5 s per row after 1 s of warm-up, 20 sessions
 *   BENCH_DURATION=10 BENCH_SESSIONS=50 node --import tsx bench/catalogue-cache.ts
 *
 *   runner (McpClient sessions, closed loop) ─► gateway "uncached": a proxy route, 3 upstreams, list_cache: false
 *                                            └► gateway "cached":   the same route, list cache on, lookup's results cached
 *                                                      each ──► the same upstream process (mcp-edge, bench handler) ×3 names
 *
 * Rows: tools/list of the 3-upstream route uncached, then warm (target ≥ 5× the uncached lists/s);
 * tools/call of the read-only `lookup` through the route, uncached, then answered from the result
 * cache (the same arguments every time). Each row: ops/s, p50, p99, the gateway's CPU per op (utime +
 * stime from /proc) and the upstream requests per op (its /metrics: 0 when the cache answers).
 */
import { readFileSync } from 'node:fs'
import { McpClient, StreamableHttpTransport } from '../gateway/client/index.ts'
import { pinSelfToLoadCore } from './cpu.ts'
import { startServer, type RunningServer } from './servers.ts'

export interface CatalogueRow { name: string; opsPerS: number; p50Ms: number; p99Ms: number; cpuUsPerOp: number; upstreamPerOp: number; errors: number }
export interface CatalogueCache { rows: CatalogueRow[]; listSpeedup: number; callSpeedup: number; sessions: number; seconds: number }

const UPSTREAMS = ['u1', 'u2', 'u3']

function processCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100
}

/** Requests the upstream answered so far (every method), from its /metrics. */
async function upstreamRequests(upstream: RunningServer): Promise<number> {
  const text = await (await fetch(new URL('/metrics', upstream.url))).text()
  let count = 0
  for (const line of text.split('\n')) if (line.startsWith('mcp_edge_requests_total')) count += Number(line.split(' ').pop())
  return count
}

async function drive(name: string, gateway: RunningServer, upstream: RunningServer, sessions: number, seconds: number, op: (client: McpClient, i: number) => Promise<boolean>): Promise<CatalogueRow> {
  const clients = await Promise.all(Array.from({ length: sessions }, async () => {
    const client = new McpClient(new StreamableHttpTransport({ url: gateway.url, standaloneStream: false }))
    await client.initialize()
    return client
  }))
  const run = async (ms: number, latencies?: number[]): Promise<{ ops: number; errors: number }> => {
    const until = Date.now() + ms
    let ops = 0
    let errors = 0
    await Promise.all(clients.map(async (client, i) => {
      while (Date.now() < until) {
        const started = performance.now()
        const ok = await op(client, i).catch(() => false)
        if (!ok) errors++
        latencies?.push(performance.now() - started)
        ops++
      }
    }))
    return { ops, errors }
  }
  await run(1000)
  const latencies: number[] = []
  const cpuBefore = processCpuUs(gateway.pid)
  const upstreamBefore = await upstreamRequests(upstream)
  const started = performance.now()
  const { ops, errors } = await run(seconds * 1000, latencies)
  const elapsedS = (performance.now() - started) / 1000
  const cpuUs = processCpuUs(gateway.pid) - cpuBefore
  const upstreamPerOp = ((await upstreamRequests(upstream)) - upstreamBefore) / ops
  await Promise.all(clients.map((client) => client.close()))
  latencies.sort((a, b) => a - b)
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  return { name, opsPerS: ops / elapsedS, p50Ms: at(0.5), p99Ms: at(0.99), cpuUsPerOp: cpuUs / ops, upstreamPerOp, errors }
}

/** Measures the four rows; `seconds` per row. */
export async function measureCatalogueCache(seconds: number, sessions = 20): Promise<CatalogueCache> {
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
  const cached = await startServer({ kind: 'edge', route: route(true) }, { logLevel: 'warn' })
  try {
    // The bench handler has 4 tools (echo, echo_progress, lookup, touch); each upstream name lists them all.
    const list = async (client: McpClient): Promise<boolean> => (await client.listTools()).length === UPSTREAMS.length * 4
    const lookup = async (client: McpClient): Promise<boolean> => {
      const result = await client.callTool('u1__lookup', { message: 'same' })
      return (result.content[0] as { text: string }).text === 'echo: same'
    }
    const rows = [
      await drive('tools/list, 3 upstreams, list_cache: false', uncached, upstream, sessions, seconds, list),
      await drive('tools/list, 3 upstreams, warm list cache', cached, upstream, sessions, seconds, list),
      await drive('tools/call read-only tool through the route, uncached', uncached, upstream, sessions, seconds, lookup),
      await drive('tools/call read-only tool, cached result (cache: {ttl_s})', cached, upstream, sessions, seconds, lookup),
    ] as const
    return { rows: [...rows], listSpeedup: rows[1].opsPerS / rows[0].opsPerS, callSpeedup: rows[3].opsPerS / rows[2].opsPerS, sessions, seconds }
  } finally {
    await Promise.all([upstream.stop(), uncached.stop(), cached.stop()])
  }
}

/** The rows as a markdown table, with the targets. */
export function catalogueTable(result: CatalogueCache): string {
  const lines = ['| Row | ops/s | p50 ms | p99 ms | gateway CPU µs/op | upstream requests/op | errors |', '|---|---|---|---|---|---|---|']
  for (const row of result.rows) lines.push(`| ${row.name} | ${row.opsPerS.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.cpuUsPerOp.toFixed(0)} | ${row.upstreamPerOp.toFixed(2)} | ${row.errors} |`)
  lines.push('', `warm list ÷ uncached list: ${result.listSpeedup.toFixed(1)}× (target ≥ 5×); cached result ÷ uncached call: ${result.callSpeedup.toFixed(1)}×; ${result.sessions} sessions, ${result.seconds} s per row`)
  return lines.join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  pinSelfToLoadCore()
  const result = await measureCatalogueCache(Number(process.env.BENCH_DURATION ?? 5), Number(process.env.BENCH_SESSIONS ?? 20))
  console.log(catalogueTable(result))
}
