/**
 * The floor under the proxy hop's CPU ratio (issue 25; not part of `npm run bench`):
 * `node --import tsx bench/proxy-floor.ts [seconds] [rounds]` (default 10 s, 3 rounds).
 *
 * proxy-hop.ts divides P's CPU per proxied call by U's per local call. This puts six measuring
 * sticks beside them (bench/servers/floor-servers.mjs and floor-clients.ts), driven by the same
 * paced loader at the same rate over the same sessions, each alone on the server core while it is
 * measured:
 *
 *   E  node:http + JSON.parse, answering the echo itself: what any Node server pays for a call
 *   S  bytes spliced to U, nothing parsed: what any Node process in the path pays
 *   H  node:http in front, a fixed head and the body to U on a pooled socket, no JSON: the least an
 *      HTTP-aware Node proxy pays
 *   M  H plus the least an MCP-aware proxy does: request parsed, id swapped, answer parsed, id put back
 *   L  M with the upstream exchange on mcp-edge's lean HTTP/1.1 pool (client/http1.ts)
 *   C  the upstream call through mcp-edge's McpClient and Streamable HTTP transport, behind a bare
 *      node:http server: P without the gateway's server side
 *
 * Each round measures U directly, then (U on the load core, as in proxy-hop.ts) each stick and P.
 * Printed: CPU per call of each (user / system, µs) and its ratio to the same round's U.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { paced, sessionsOn, type PacedRun } from './proxy-hop.ts'
import { LOAD_CORE, movePid, pinned, pinSelfToLoadCore, SERVER_CORES } from './cpu.ts'
import { startServer } from './servers.ts'

const seconds = Number(process.argv[2] ?? 10)
const rounds = Number(process.argv[3] ?? 3)
const RATE = 1000
const SESSIONS = 20
const floorServers = fileURLToPath(new URL('./servers/floor-servers.mjs', import.meta.url))
const floorClients = ['--import', 'tsx', fileURLToPath(new URL('./servers/floor-clients.ts', import.meta.url))]

/** utime and stime of a process, µs. */
function userSystemUs(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return [Number(fields[11]) * 10_000, Number(fields[12]) * 10_000]
}

/** A measuring stick's process: floor-servers.mjs by default, or `script` (node's arguments before `args`). */
async function startFloor(args: string[], script = [floorServers]): Promise<{ child: ChildProcess; url: string }> {
  const [command, argv] = pinned(SERVER_CORES, process.execPath, [...script, ...args])
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      const found = /PORT (\d+)/.exec(text)
      if (found !== null) resolve(found[1]!)
    })
    child.once('exit', (code) => reject(new Error(`floor server ${args[0]} exited (${code})`)))
  })
  return { child, url: `http://127.0.0.1:${port}/mcp` }
}

interface Measured { run: PacedRun; userUs: number; systemUs: number }

async function measure(url: string, sessions: string[], pid: number): Promise<Measured> {
  const before = userSystemUs(pid)
  const run = await paced(url, sessions, RATE, seconds, pid)
  const after = userSystemUs(pid)
  if (run.errors > 0) throw new Error(`${run.errors} calls to ${url} failed`)
  return { run, userUs: (after[0] - before[0]) / run.calls, systemUs: (after[1] - before[1]) / run.calls }
}

pinSelfToLoadCore()
const upstream = await startServer({ kind: 'edge' })
const proxy = await startServer({ kind: 'edge', route: { handler: undefined, prefix: 'never', upstreams: [{ name: 'up', url: upstream.url, health_interval: 3600 }] } })
const { hostname, port, pathname } = new URL(upstream.url)
const floors = {
  E: await startFloor(['echo']),
  S: await startFloor(['splice', hostname, port]),
  H: await startFloor(['http-proxy', hostname, port, pathname]),
  M: await startFloor(['mcp-proxy', hostname, port, pathname]),
  L: await startFloor(['lean-exchange', upstream.url], floorClients),
  C: await startFloor(['gateway-client', upstream.url], floorClients),
}
try {
  const direct = await sessionsOn(upstream.url, SESSIONS)
  const proxied = await sessionsOn(proxy.url, SESSIONS)
  // U's sessions serve E (which checks none), S, H, M and L (which pass the session header to U); C
  // opens one upstream session per downstream one, as P does.
  const targets: Array<[string, string, string[], number]> = [
    ['E', floors.E.url, direct, floors.E.child.pid!],
    ['S', floors.S.url, direct, floors.S.child.pid!],
    ['H', floors.H.url, direct, floors.H.child.pid!],
    ['M', floors.M.url, direct, floors.M.child.pid!],
    ['L', floors.L.url, direct, floors.L.child.pid!],
    ['C', floors.C.url, direct, floors.C.child.pid!],
    ['P', proxy.url, proxied, proxy.pid],
  ]
  // Warm-up as long as a measured run, each target (proxy-hop.ts: P was still optimising after 3 s).
  await paced(upstream.url, direct, RATE, seconds, upstream.pid)
  for (const [, url, sessions, pid] of targets) await paced(url, sessions, RATE, seconds, pid)
  const cell = (m: Measured, u: Measured): string =>
    `${(m.run.cpuUsPerCall).toFixed(0)} µs (${m.userUs.toFixed(0)}/${m.systemUs.toFixed(0)}) ${(m.run.cpuUsPerCall / u.run.cpuUsPerCall).toFixed(2)}×`
  console.log(`${RATE} calls/s over ${SESSIONS} sessions, ${seconds} s a run; CPU per call (user/system µs) and ÷ U`)
  for (let round = 0; round < rounds; round++) {
    movePid(upstream.pid, SERVER_CORES)
    const u = await measure(upstream.url, direct, upstream.pid)
    movePid(upstream.pid, LOAD_CORE)
    const row = [`round ${round + 1}: U ${u.run.cpuUsPerCall.toFixed(0)} µs (${u.userUs.toFixed(0)}/${u.systemUs.toFixed(0)})`]
    for (const [name, url, sessions, pid] of targets) row.push(`${name} ${cell(await measure(url, sessions, pid), u)}`)
    console.log(row.join(' | '))
  }
} finally {
  for (const floor of Object.values(floors)) floor.child.kill()
  await proxy.stop()
  await upstream.stop()
}
