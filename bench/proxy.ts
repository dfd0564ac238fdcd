/**
 * tools/call through a proxy route to an mcp-edge upstream over HTTP (keep-alive, upstream sessions
 * pooled per downstream session), next to the same tool served locally by the same gateway and the
 * upstream called directly. Two gateway processes: the upstream (handlers/bench.ts at /mcp) and the
 * gateway under test (a proxy route /proxy to it, and /local with the same handler). The runner's
 * clients (the project's McpClient, one call in flight per session) check every answer.
 *
 *   node --import tsx bench/proxy.ts                # 5 s per row after 1 s of warm-up, 20 sessions
 *   BENCH_DURATION=10 BENCH_SESSIONS=50 node --import tsx bench/proxy.ts
 *
 * Per row: calls/s, p50 and p99, and the gateway's CPU per call (utime + stime of its process over
 * the measured run, from /proc). The proxy's row counts only the proxy process; the upstream's work is
 * the upstream's. Then: CPU per proxied call ÷ CPU per local call (target ≤ 1.5), the p50 the proxy
 * adds to a direct call, and the upstream's initialize count (from its /metrics) against the number
 * of sessions (target: one per session, none per call).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { McpClient, StreamableHttpTransport } from '../gateway/client/index.ts'
import { keepAliveAgents, nodeExchange } from '../gateway/client/http-exchange.ts'
import { LegacySseTransport } from '../gateway/client/legacy-sse.ts'
import { freePort } from '../test/fixtures/waiting.ts'
import { pinned, pinSelfToLoadCore, SERVER_CORES } from './cpu.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const handler = fileURLToPath(new URL('./handlers/bench.ts', import.meta.url))
const durationS = Number(process.env.BENCH_DURATION ?? 5)
const sessions = Number(process.env.BENCH_SESSIONS ?? 20)

interface Row { name: string; callsPerS: number; p50Ms: number; p99Ms: number; cpuUsPerCall: number; errors: number }

function processCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100
}

async function gateway(routes: object[], root = ROOT): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  const config = { listen: { host: '127.0.0.1', port }, log: { level: 'warn' }, routes }
  const [command, args] = pinned(SERVER_CORES, process.execPath, [...(process.env.BENCH_CPU_PROF === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_CPU_PROF]), '--conditions=mcp-edge-source', '--import', 'tsx', 'bench/servers/edge.ts'])
  const child = spawn(command, args, { cwd: root, env: { ...process.env, BENCH_EDGE_CONFIG: JSON.stringify(config) }, stdio: ['ignore', 'ignore', 'inherit'] })
  const url = `http://127.0.0.1:${port}`
  for (let tries = 0; tries < 600; tries++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return { url, child }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('a gateway did not start')
}

/** The runner's connections for HTTP+SSE (2024-11-05) clients. */
const legacyExchange = nodeExchange(keepAliveAgents())

/** `legacy`: the clients speak HTTP+SSE (2024-11-05), `url` being their stream's. */
async function drive(name: string, url: string, pid: number, legacy = false): Promise<Row> {
  const clients = await Promise.all(Array.from({ length: sessions }, async () => {
    const client = new McpClient(legacy ? new LegacySseTransport({ url, exchange: legacyExchange }) : new StreamableHttpTransport({ url, standaloneStream: false }))
    await client.initialize()
    return client
  }))
  const run = async (ms: number, latencies?: number[]): Promise<{ calls: number; errors: number }> => {
    const until = Date.now() + ms
    let calls = 0
    let errors = 0
    await Promise.all(clients.map(async (client, i) => {
      while (Date.now() < until) {
        const message = `s${i}-${calls}`
        const started = performance.now()
        try {
          const result = await client.callTool('echo', { message })
          if ((result.content[0] as { text: string }).text !== `echo: ${message}`) errors++
        } catch {
          errors++
        }
        latencies?.push(performance.now() - started)
        calls++
      }
    }))
    return { calls, errors }
  }
  await run(1000)
  const latencies: number[] = []
  const cpuBefore = processCpuUs(pid)
  const started = performance.now()
  const { calls, errors } = await run(durationS * 1000, latencies)
  const elapsedS = (performance.now() - started) / 1000
  const cpuUs = processCpuUs(pid) - cpuBefore
  await Promise.all(clients.map((client) => client.close()))
  latencies.sort((a, b) => a - b)
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  return { name, callsPerS: calls / elapsedS, p50Ms: at(0.5), p99Ms: at(0.99), cpuUsPerCall: cpuUs / calls, errors }
}

async function initializeCount(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  let count = 0
  for (const line of text.split('\n')) if (line.startsWith('mcp_edge_requests_total') && line.includes('method="initialize"')) count += Number(line.split(' ').pop())
  return count
}

const median = (values: number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!

pinSelfToLoadCore()
const upstream = await gateway([{ location: '/mcp', handler, server: { name: 'upstream', version: '1' }, transports: ['streamable_http', 'sse'] }])
const proxyRoutes = [
  { location: '/local', handler, server: { name: 'local', version: '1' } },
  { location: '/proxy', server: { name: 'proxy', version: '1' }, upstreams: [{ name: 'up', url: `${upstream.url}/mcp`, health_interval: 3600 }], prefix: 'never' },
]
// The HTTP+SSE (2024-11-05) rows: an upstream of that transport (the upstream serves it too), and clients of it.
const legacyRoutes = [
  { location: '/local-sse', handler, server: { name: 'local-sse', version: '1' }, transports: ['sse'] },
  { location: '/proxy-sse', server: { name: 'proxy-sse', version: '1' }, upstreams: [{ name: 'up', sse: `${upstream.url}/mcp/sse`, health_interval: 3600 }], prefix: 'never' },
]
const edge = await gateway([...proxyRoutes, ...legacyRoutes])
// BENCH_PROXY_BASELINE=<another checkout> runs its gateway too, row beside row in every round: before/after on one busy machine.
const baselineRoot = process.env.BENCH_PROXY_BASELINE
const baseline = baselineRoot === undefined ? undefined : await gateway(proxyRoutes, baselineRoot)
const rounds = Number(process.env.BENCH_ROUNDS ?? 1)
try {
  const direct = await drive('upstream called directly', `${upstream.url}/mcp`, upstream.child.pid!)
  const table: Row[] = [direct]
  const ratios: number[] = []
  const baselineRatios: number[] = []
  const added: number[] = []
  let proxiedSessions = 0
  const before = await initializeCount(upstream.url)
  for (let round = 1; round <= rounds; round++) {
    const local = await drive(`local tools/call on the gateway (round ${round})`, `${edge.url}/local`, edge.child.pid!)
    const proxied = await drive(`tools/call through a proxy route to an mcp-edge upstream over HTTP (keep-alive, pooled) (round ${round})`, `${edge.url}/proxy`, edge.child.pid!)
    proxiedSessions += sessions
    table.push(local, proxied)
    ratios.push(proxied.cpuUsPerCall / local.cpuUsPerCall)
    added.push(proxied.p50Ms - direct.p50Ms)
    if (baseline !== undefined) {
      const baseLocal = await drive(`baseline: local tools/call (round ${round})`, `${baseline.url}/local`, baseline.child.pid!)
      const baseProxied = await drive(`baseline: tools/call through the proxy route (round ${round})`, `${baseline.url}/proxy`, baseline.child.pid!)
      proxiedSessions += sessions
      table.push(baseLocal, baseProxied)
      baselineRatios.push(baseProxied.cpuUsPerCall / baseLocal.cpuUsPerCall)
    }
  }
  // Every proxied session initialized its upstream session once; the probes are not counted (their ping comes first).
  const extraInitializes = (await initializeCount(upstream.url)) - before - proxiedSessions
  table.push(
    await drive('local tools/call from HTTP+SSE (2024-11-05) clients (POST 202, answer on the stream)', `${edge.url}/local-sse/sse`, edge.child.pid!, true),
    await drive('tools/call through a proxy route to an HTTP+SSE (2024-11-05) upstream', `${edge.url}/proxy-sse`, edge.child.pid!),
  )
  console.log(`| Row | calls/s | p50 ms | p99 ms | gateway CPU µs/call | errors |\n|---|---|---|---|---|---|`)
  for (const row of table) console.log(`| ${row.name} | ${row.callsPerS.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.cpuUsPerCall.toFixed(0)} | ${row.errors} |`)
  console.log(`\n${sessions} sessions, one call in flight each, ${durationS} s per row, ${rounds} round(s)`)
  console.log(`CPU per proxied call ÷ CPU per local call: ${ratios.map((r) => r.toFixed(2)).join(', ')}; median ${median(ratios).toFixed(2)}× (target ≤ 1.5×)`)
  if (baseline !== undefined) console.log(`baseline (${baselineRoot}): ${baselineRatios.map((r) => r.toFixed(2)).join(', ')}; median ${median(baselineRatios).toFixed(2)}×`)
  console.log(`p50 added by the proxy hop (proxied − direct, closed loop): median ${median(added).toFixed(2)} ms`)
  console.log(`upstream initialize calls beyond one per proxied session (${proxiedSessions} sessions): ${extraInitializes} (target: 0)`)
} finally {
  upstream.child.kill('SIGTERM')
  edge.child.kill('SIGTERM')
  baseline?.child.kill('SIGTERM')
}
