/**
 * tools/call through the stdio upstream pool with the project's McpClient, against one McpClient
 * on a dedicated StdioTransport (the floor: no pool between). Each of `sessions` clients keeps one
 * call in flight; every answer is checked (`echo: <what this session sent>`), so cross-talk would
 * count as an error.
 *
 *   node --import tsx bench/stdio-pool.ts          # 5 s per row after 1 s of warm-up
 *   BENCH_DURATION=10 BENCH_SESSIONS=100 node --import tsx bench/stdio-pool.ts
 *
 * Rows: calls/s, p50 and p99 latency, and the gateway's CPU per call (process.cpuUsage over the
 * measured run: the pool's work, the clients' and the JSON of both directions; the children's CPU is
 * theirs and not counted).
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { McpClient, StdioTransport } from '../gateway/client/index.ts'
import { resolveStdioUpstream } from '../gateway/upstream/stdio-pool-config.ts'
import { StdioPool } from '../gateway/upstream/stdio-pool.ts'

const server = fileURLToPath(new URL('./servers/stdio-echo.mjs', import.meta.url))
const durationS = Number(process.env.BENCH_DURATION ?? 5)
const sessions = Number(process.env.BENCH_SESSIONS ?? 50)

interface Row { name: string; callsPerS: number; p50Ms: number; p99Ms: number; cpuUsPerCall: number; childCpuUsPerCall: number; errors: number }

/** CPU time (µs) a process has used, from /proc (Linux); 0 elsewhere. */
function processCpuUs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100 // utime + stime, in clock ticks of 10 ms
  } catch {
    return 0
  }
}

async function drive(name: string, clients: McpClient[], childPids: () => number[]): Promise<Row> {
  const run = async (ms: number, latencies: number[] | undefined): Promise<{ calls: number; errors: number }> => {
    const until = Date.now() + ms
    let calls = 0
    let errors = 0
    await Promise.all(
      clients.map(async (client, i) => {
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
      }),
    )
    return { calls, errors }
  }
  await run(1000, undefined)
  const latencies: number[] = []
  const pids = childPids()
  const childCpu = pids.reduce((sum, pid) => sum + processCpuUs(pid), 0)
  const cpu = process.cpuUsage()
  const started = performance.now()
  const { calls, errors } = await run(durationS * 1000, latencies)
  const elapsedS = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const childUsed = pids.reduce((sum, pid) => sum + processCpuUs(pid), 0) - childCpu
  latencies.sort((a, b) => a - b)
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  return { name, callsPerS: calls / elapsedS, p50Ms: at(0.5), p99Ms: at(0.99), cpuUsPerCall: (used.user + used.system) / calls, childCpuUsPerCall: childUsed / calls, errors }
}

async function direct(): Promise<Row> {
  // One dedicated connection shared by `sessions` callers: what a pool can at best approach.
  const transport = new StdioTransport({ command: process.execPath, args: [server], stderr: 'ignore' })
  const client = new McpClient(transport)
  await client.initialize()
  try {
    return await drive('direct StdioTransport (1 child, no pool)', Array.from({ length: sessions }, () => client), () => [transport.pid!])
  } finally {
    await client.close()
  }
}

async function pooled(max: number): Promise<Row> {
  const config = resolveStdioUpstream({ name: 'echo', command: ['node', server], pool: { max } }, process.cwd())
  const pool = new StdioPool(config, { log: pino({ level: 'warn' }) })
  try {
    const clients = await Promise.all(
      Array.from({ length: sessions }, async (_, i) => {
        const client = new McpClient(pool.transportFor({ session: `s${i}` }))
        await client.initialize()
        return client
      }),
    )
    return await drive(`pool, ${sessions} sessions over ${max} child${max === 1 ? '' : 'ren'}`, clients, () => pool.status().map((child) => child.pid!))
  } finally {
    await pool.close()
  }
}

const rows = [await direct(), await pooled(1), await pooled(2)]
const base = rows[0]!
const log = pino()
for (const row of rows) {
  log.info({
    ...row,
    callsPerS: Math.round(row.callsPerS),
    p50Ms: Number(row.p50Ms.toFixed(2)),
    p99Ms: Number(row.p99Ms.toFixed(2)),
    cpuUsPerCall: Math.round(row.cpuUsPerCall),
    childCpuUsPerCall: Math.round(row.childCpuUsPerCall),
    cpuVsDirect: Number((row.cpuUsPerCall / base.cpuUsPerCall).toFixed(2)),
  }, 'stdio pool bench')
}
