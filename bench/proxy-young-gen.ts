/**
 * The proxy hop's collections against node flags (issue 25's CPU figure; not part of `npm run bench`):
 * one upstream U and one proxy P per variant, each P started with `--trace-gc-nvp` and the variant's
 * flags, then `rounds` rounds of `proxy-hop`'s paced load (1,000 calls a second over 20 sessions) at
 * every P in turn, so the variants of a round meet the same neighbours.
 *
 *   npx tsx bench/proxy-young-gen.ts [seconds] [rounds] '<flags of variant 1>' '<flags of variant 2>' …
 *   e.g.  npx tsx bench/proxy-young-gen.ts 10 4 '' '--min-semi-space-size=16'
 *
 * An empty variant is node's defaults. U runs on the load core beside the loader and each P alone on
 * the server core, as `proxy-hop` measures P. Prints per run: P's CPU per call (utime + stime from
 * /proc), scavenges per 1,000 calls, their pause sum, KB allocated a call, MB allocated between two
 * scavenges (about the young generation's size); then each variant's medians.
 */
import { readFileSync, readlinkSync } from 'node:fs'
import { loadavg } from 'node:os'
import { LOAD_CORE, movePid, pinSelfToLoadCore } from './cpu.ts'
import { paced, sessionsOn } from './proxy-hop.ts'
import { startServer, type RunningServer } from './servers.ts'

const seconds = Number(process.argv[2] ?? 10)
const rounds = Number(process.argv[3] ?? 3)
const rate = 1000
const sessions = 20

/** Each argument after the first two is a variant: its node flags, space-separated ('' for node's defaults). */
function variantsOf(args: string[]): string[][] {
  const variants = args.map((arg) => arg.split(' ').filter((flag) => flag !== ''))
  return variants.length === 0 ? [[]] : variants
}

interface Collected {
  scavenges: number
  pauseMs: number
  allocatedKb: number
  end: number
}

/** P's scavenges since byte `from` of its --trace-gc-nvp output. */
function collectedSince(logPath: string, from: number): Collected {
  const text = readFileSync(logPath, 'utf8')
  const field = (line: string, name: string): number => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0)
  const result: Collected = { scavenges: 0, pauseMs: 0, allocatedKb: 0, end: text.length }
  for (const line of text.slice(from).split('\n')) {
    if (!/\bgc=s\b/.test(line)) {
      if (/\bgc=/.test(line)) result.allocatedKb += field(line, 'allocated') / 1024
      continue
    }
    result.scavenges++
    result.pauseMs += field(line, 'pause')
    result.allocatedKb += field(line, 'allocated') / 1024
  }
  return result
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const variants = variantsOf(process.argv.slice(4))
pinSelfToLoadCore()
const upstream = await startServer({ kind: 'edge' })
const proxies: { flags: string[]; server: RunningServer; log: string; sessions: string[]; cpu: number[]; scavenges: number[]; kb: number[] }[] = []
try {
  movePid(upstream.pid, LOAD_CORE)
  for (const flags of variants) {
    const server = await startServer(
      { kind: 'edge', route: { handler: undefined, prefix: 'never', upstreams: [{ name: 'up', url: upstream.url, health_interval: 3600 }] } },
      { nodeFlags: ['--trace-gc-nvp', ...flags] },
    )
    proxies.push({ flags, server, log: readlinkSync(`/proc/${server.pid}/fd/1`), sessions: await sessionsOn(server.url, sessions), cpu: [], scavenges: [], kb: [] })
  }
  for (const proxy of proxies) await paced(proxy.server.url, proxy.sessions, rate, 3, proxy.server.pid)
  console.log(`${rate}/s over ${sessions} sessions, ${seconds} s a run; load average ${loadavg().map((n) => n.toFixed(1)).join(' ')}`)
  for (let round = 1; round <= rounds; round++) {
    for (const proxy of proxies) {
      const from = readFileSync(proxy.log, 'utf8').length
      const run = await paced(proxy.server.url, proxy.sessions, rate, seconds, proxy.server.pid)
      const gc = collectedSince(proxy.log, from)
      proxy.cpu.push(run.cpuUsPerCall)
      proxy.scavenges.push((gc.scavenges * 1000) / run.calls)
      proxy.kb.push(gc.allocatedKb / run.calls)
      console.log(
        `round ${round} ${(proxy.flags.join(' ') || 'defaults').padEnd(28)} cpu ${run.cpuUsPerCall.toFixed(0).padStart(4)} µs/call  p50 ${run.p50Ms.toFixed(2)} p99 ${run.p99Ms.toFixed(2)} ms  ` +
          `scavenges ${((gc.scavenges * 1000) / run.calls).toFixed(2)}/1000 calls (pauses ${gc.pauseMs.toFixed(1)} ms)  ${(gc.allocatedKb / run.calls).toFixed(1)} KB/call  ` +
          `${gc.scavenges === 0 ? '-' : (gc.allocatedKb / 1024 / gc.scavenges).toFixed(1)} MB between scavenges  errors ${run.errors}  load ${loadavg()[0]!.toFixed(1)}`,
      )
    }
  }
  for (const proxy of proxies) {
    console.log(`median ${(proxy.flags.join(' ') || 'defaults').padEnd(28)} cpu ${median(proxy.cpu).toFixed(0)} µs/call  scavenges ${median(proxy.scavenges).toFixed(2)}/1000 calls  ${median(proxy.kb).toFixed(1)} KB/call`)
  }
} finally {
  for (const proxy of proxies) await proxy.server.stop()
  await upstream.stop()
}
