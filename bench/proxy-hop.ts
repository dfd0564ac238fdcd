/**
 * The proxy hop at a fixed rate (`npm run bench`, part `proxy-hop`): what a proxy route adds to a
 * tools/call when the load is steady rather than saturating.
 *
 *   paced loader (runner, load core) ──► upstream U: mcp-edge, handlers/bench.ts at /mcp ("local": U serves it itself)
 *                                    └─► proxy P: mcp-edge, a transparent proxy route ──► U (keep-alive, pooled)
 *
 * Each round measures U first, alone on the server core; then U moves to the load core and P, alone
 * on the server core, is measured proxying to it. The ratio is the median round's (3 by default).
 *
 * The loader is open-loop: it sends `rate` calls a second on a schedule, whatever the answers do,
 * and times each call from when it was due, so a stall shows as latency rather than as fewer
 * requests (wrk here has no fixed-rate mode). Both targets are driven the same way, one after the
 * other, with the same sessions count; every answer is checked (`echo: <message>`).
 *
 * Measured: p50/p99 of each, the p50 the hop adds (P − U), CPU per call of P (proxied) and of U
 * (the same call served locally by the same gateway code), each process's utime + stime over its
 * run from /proc, and the initialize calls U saw beyond one per session P made (target 0).
 */
import { readFileSync } from 'node:fs'
import { McpHttp } from './mcp-http.ts'
import { LeanCaller } from './lean-caller.ts'
import { LOAD_CORE, movePid, SERVER_CORES } from './cpu.ts'
import { startServer, type RunningServer } from './servers.ts'

export interface ProxyHop {
  rate: number
  seconds: number
  sessions: number
  direct: PacedRun
  proxied: PacedRun
  /** proxied p50 − direct p50, ms. */
  addedP50Ms: number
  /** P's CPU per proxied call ÷ U's CPU per local call: the median over the paired rounds. */
  cpuRatio: number
  /** Each round's ratio (U then P, back to back), when there were several. */
  roundRatios?: number[]
  /** initialize calls U saw beyond one per P session (and P's health probe). */
  extraInitializes: number
}

export interface PacedRun {
  calls: number
  /** Calls per second actually completed. */
  achieved: number
  p50Ms: number
  p99Ms: number
  errors: number
  /** CPU of the measured process per call, µs. */
  cpuUsPerCall: number
}

/** utime + stime of a process, µs (Linux /proc). */
function processCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100
}

/**
 * The loader's client per target, kept across runs (warm keep-alive connections, as a load generator
 * keeps them): a lean one, since it shares the load core with U while P is measured (lean-caller.ts).
 */
const callers = new Map<string, LeanCaller>()

/** Sends `rate` calls a second for `seconds` over `sessions`, timed from when each was due. */
export async function paced(url: string, sessions: string[], rate: number, seconds: number, pid: number): Promise<PacedRun> {
  let client = callers.get(url)
  if (client === undefined) callers.set(url, (client = new LeanCaller(url)))
  const latencies: number[] = []
  let errors = 0
  let sent = 0
  const inFlight = new Set<Promise<void>>()
  const total = rate * seconds
  const cpuBefore = processCpuUs(pid)
  const started = performance.now()
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000))
      while (sent < due) {
        const n = sent++
        const dueAt = started + (n * 1000) / rate
        const message = `p${n}`
        const call: Promise<void> = client.callTool('echo', { message }, sessions[n % sessions.length]!).then(
          (text) => {
            if (text !== `echo: ${message}`) errors++
          },
          () => void errors++,
        ).then(() => {
          latencies.push(performance.now() - dueAt)
          inFlight.delete(call)
        })
        inFlight.add(call)
      }
      if (sent < total) setTimeout(tick, 1)
      else resolve()
    }
    tick()
  })
  await Promise.all(inFlight)
  const elapsedS = (performance.now() - started) / 1000
  const cpuUs = processCpuUs(pid) - cpuBefore
  latencies.sort((a, b) => a - b)
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!
  return { calls: total, achieved: total / elapsedS, p50Ms: at(0.5), p99Ms: at(0.99), errors, cpuUsPerCall: cpuUs / total }
}

async function initializes(server: RunningServer): Promise<number> {
  const text = await (await fetch(server.url.replace(/\/mcp$/, '/metrics'))).text()
  let count = 0
  for (const line of text.split('\n')) if (line.startsWith('mcp_edge_requests_total') && line.includes('method="initialize"')) count += Number(line.split(' ').pop())
  return count
}

export async function sessionsOn(url: string, count: number): Promise<string[]> {
  const client = new McpHttp(url, 20)
  try {
    return await Promise.all(Array.from({ length: count }, () => client.initialize()))
  } finally {
    client.close()
  }
}

/**
 * Starts U and P, warms both, then `rounds` paired rounds: U directly, then through P, back to back
 * (a busy neighbour then slows both runs of a pair alike). The ratio is the median pair's; `direct`
 * and `proxied` are that pair's runs. BENCH_PROXY_ROUNDS sets `rounds` (default 3).
 */
export async function measureProxyHop(rate: number, seconds: number, sessions = 20, rounds = Math.max(1, Number(process.env.BENCH_PROXY_ROUNDS ?? 3))): Promise<ProxyHop> {
  const upstream = await startServer({ kind: 'edge' })
  let proxy: RunningServer | undefined
  try {
    proxy = await startServer({
      kind: 'edge',
      route: { handler: undefined, prefix: 'never', upstreams: [{ name: 'up', url: upstream.url, health_interval: 3600 }] },
    })
    const directSessions = await sessionsOn(upstream.url, sessions)
    const proxiedSessions = await sessionsOn(proxy.url, sessions)
    // A warm-up as long as a measured run: after 3 s (the old seconds / 3) P was still being
    // optimised, and the first round read 2.8x where the next two read 1.9-2.1x on a quiet machine.
    const warmS = seconds
    await paced(upstream.url, directSessions, rate, warmS, upstream.pid)
    await paced(proxy.url, proxiedSessions, rate, warmS, proxy.pid)
    const pairs: { direct: PacedRun; proxied: PacedRun; ratio: number }[] = []
    for (let round = 0; round < rounds; round++) {
      // The measured process has the server core to itself in both runs: U while it serves directly,
      // P while it proxies (U then runs beside the load, as an upstream runs on its own host or
      // cores). Sharing P's core, U takes it whenever P writes to it, and P was charged for the
      // preemptions (about 9% of its CPU per call on a 2-core machine).
      movePid(upstream.pid, SERVER_CORES)
      const direct = await paced(upstream.url, directSessions, rate, seconds, upstream.pid)
      movePid(upstream.pid, LOAD_CORE)
      const proxied = await paced(proxy.url, proxiedSessions, rate, seconds, proxy.pid)
      pairs.push({ direct, proxied, ratio: proxied.cpuUsPerCall / direct.cpuUsPerCall })
    }
    const median = [...pairs].sort((a, b) => a.ratio - b.ratio)[Math.floor(pairs.length / 2)]!
    // U saw: the direct sessions, one upstream session per P session, and P's health probe.
    const extraInitializes = (await initializes(upstream)) - (await initializes(proxy)) - sessions - 1
    return {
      rate,
      seconds,
      sessions,
      direct: median.direct,
      proxied: median.proxied,
      addedP50Ms: median.proxied.p50Ms - median.direct.p50Ms,
      cpuRatio: median.ratio,
      ...(pairs.length > 1 ? { roundRatios: pairs.map((pair) => Math.round(pair.ratio * 100) / 100) } : {}),
      extraInitializes,
    }
  } finally {
    await proxy?.stop()
    await upstream.stop()
  }
}
