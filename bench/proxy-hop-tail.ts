/**
 * Where the proxy hop's p99 comes from (issue 25): the `proxy-hop` part's paced load, with U placed
 * and prioritised several ways, one after the other in each round, and P's collections counted from
 * `--trace-gc-nvp` (pauses, KB allocated and KB promoted a call). Not part of `npm run bench`: `npx tsx bench/proxy-hop-tail.ts [seconds] [rounds]`.
 *
 *   direct          U on the server core, the loader on the load core (as proxy-hop measures U)
 *   U beside load   P on the server core, U on the load core with the loader (as proxy-hop measures P)
 *   U beside P      P and U on the server core, the loader alone on the load core
 *   … U first       U beside the loader, but the loader at nice 19: U never waits behind it
 *
 * Every measured process (U, P) runs at nice −20 and the loader at −20 unless said otherwise, so
 * other jobs on a shared machine (at nice ≥ 0) take little from the runs (root only; otherwise the
 * niceness stays as it is and the script says so).
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { loadavg } from 'node:os'
import { LOAD_CORE, movePid, pinSelfToLoadCore, SERVER_CORES } from './cpu.ts'
import { paced, sessionsOn, type PacedRun } from './proxy-hop.ts'
import { startServer } from './servers.ts'

/** Sets the niceness of every thread of `pid`; false when not allowed. */
function nice(pid: number, value: number): boolean {
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) execFileSync('renice', ['-n', String(value), '-p', task], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * P's scavenges and mark-compacts since `from` (a byte offset into its --trace-gc-nvp output): count,
 * pause sum and max (ms), the MB allocated and the MB promoted to the old generation meanwhile (both
 * load-independent, unlike the pauses). A call whose objects outlive it is promoted: U, serving the
 * call itself, promotes about nothing.
 */
function gcSince(logPath: string, from: number): { scavenges: number; marks: number; sumMs: number; maxMs: number; allocatedMb: number; promotedMb: number; end: number } {
  const text = readFileSync(logPath, 'utf8')
  let scavenges = 0
  let marks = 0
  let sumMs = 0
  let maxMs = 0
  let allocated = 0
  let promoted = 0
  const field = (line: string, name: string): number => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0)
  for (const line of text.slice(from).split('\n')) {
    const kind = /\bgc=(\w+)/.exec(line)?.[1]
    if (kind === undefined) continue
    if (kind === 's') scavenges++
    else marks++
    const pause = field(line, 'pause')
    sumMs += pause
    maxMs = Math.max(maxMs, pause)
    allocated += field(line, 'allocated')
    promoted += field(line, 'promoted')
  }
  return { scavenges, marks, sumMs, maxMs, allocatedMb: allocated / 2 ** 20, promotedMb: promoted / 2 ** 20, end: text.length }
}

const seconds = Number(process.argv[2] ?? 10)
const rounds = Number(process.argv[3] ?? 2)
const rate = 1000
const sessions = 20

pinSelfToLoadCore()
const upstream = await startServer({ kind: 'edge' })
const proxy = await startServer(
  { kind: 'edge', route: { handler: undefined, prefix: 'never', upstreams: [{ name: 'up', url: upstream.url, health_interval: 3600 }] } },
  { nodeFlags: ['--trace-gc', '--trace-gc-nvp'] },
)
const proxyLog = readlinkSync(`/proc/${proxy.pid}/fd/1`)
try {
  const niced = nice(upstream.pid, -20) && nice(proxy.pid, -20)
  const directSessions = await sessionsOn(upstream.url, sessions)
  const proxiedSessions = await sessionsOn(proxy.url, sessions)
  await paced(upstream.url, directSessions, rate, 3, upstream.pid)
  await paced(proxy.url, proxiedSessions, rate, 3, proxy.pid)
  console.log(`load average ${loadavg().map((n) => n.toFixed(1)).join(' ')}; niced: ${niced}; ${rate}/s over ${sessions} sessions, ${seconds} s a run`)
  const row = (name: string, run: PacedRun, loaderUs: number, gc?: ReturnType<typeof gcSince>): void => {
    const gcText = gc === undefined ? '' : `  P gc: ${gc.scavenges} scavenges ${gc.marks} mark, pauses sum ${gc.sumMs.toFixed(1)} max ${gc.maxMs.toFixed(2)} ms, ${((gc.allocatedMb * 1024) / run.calls).toFixed(1)} KB/call, promoted ${((gc.promotedMb * 1024) / run.calls).toFixed(2)} KB/call`
    console.log(`${name.padEnd(34)} p50 ${run.p50Ms.toFixed(2).padStart(6)}  p99 ${run.p99Ms.toFixed(2).padStart(6)} ms  cpu ${run.cpuUsPerCall.toFixed(0).padStart(4)} µs/call, loader ${loaderUs.toFixed(0)}  errors ${run.errors}${gcText}`)
  }
  /** `run`, and the loader's own CPU per call meanwhile (µs). */
  const timed = async (run: () => Promise<PacedRun>): Promise<[PacedRun, number]> => {
    const before = process.cpuUsage()
    const result = await run()
    const used = process.cpuUsage(before)
    return [result, (used.user + used.system) / result.calls]
  }
  let offset = 0
  const proxied = async (name: string): Promise<void> => {
    offset = readFileSync(proxyLog, 'utf8').length
    const [run, loaderUs] = await timed(() => paced(proxy.url, proxiedSessions, rate, seconds, proxy.pid))
    const gc = gcSince(proxyLog, offset)
    row(name, run, loaderUs, gc)
  }
  for (let round = 1; round <= rounds; round++) {
    console.log(`round ${round} (load average ${loadavg()[0]!.toFixed(1)})`)
    nice(process.pid, -20)
    movePid(upstream.pid, SERVER_CORES)
    row('direct', ...(await timed(() => paced(upstream.url, directSessions, rate, seconds, upstream.pid))))
    movePid(upstream.pid, LOAD_CORE)
    await proxied('proxied, U beside load')
    nice(process.pid, 19)
    await proxied('proxied, U beside load, U first')
    nice(process.pid, -20)
    movePid(upstream.pid, SERVER_CORES)
    await proxied('proxied, U beside P')
  }
} finally {
  await proxy.stop()
  await upstream.stop()
}
