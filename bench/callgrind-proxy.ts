/**
 * Instructions per call of the proxy hop, under callgrind: a figure that a loaded machine does not
 * move (CPU time does), for comparing two versions of the proxy path. Not part of `npm run bench`.
 *
 *   npx tsx bench/callgrind-proxy.ts proxied [calls]   P (a proxy route to U) runs under callgrind
 *   npx tsx bench/callgrind-proxy.ts direct [calls]    U (handlers/bench.ts, serving the call itself) does
 *
 * Same servers and call as bench/proxy-hop.ts (echo over 20 sessions). The measured server runs from
 * an esbuild bundle (bench/servers/edge.ts and handlers/bench.ts), plain node under valgrind: tsx's
 * loader thread, under valgrind's one-thread-at-a-time scheduling, never got the gateway listening
 * within ten minutes on a loaded machine. Instrumentation is off until the
 * warm-up is done (BENCH_CALLGRIND_WARM calls, default 3,000), on for `calls` (default 2,000) calls, one
 * in flight (BENCH_CALLGRIND_IN_FLIGHT), then off again; the
 * callgrind.out file lands in the folder given by BENCH_CALLGRIND_DIR (default the temp folder).
 * Prints Ir per call; `callgrind_annotate` the file for the hot functions (V8's JIT code shows as
 * addresses; use `node --cpu-prof` for the JavaScript side).
 */
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync, readdirSync, rmSync } from 'node:fs'
import { build, type BuildOptions } from 'esbuild'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { McpHttp } from './mcp-http.ts'
import { ROOT, startServer, type RunningServer } from './servers.ts'

const mode = process.argv[2] === 'direct' ? 'direct' : 'proxied'
const calls = Number(process.argv[3] ?? 2000)
const sessionsCount = 20
/** Calls in flight: 1 by default, as a count with more depends on how many requests one event-loop turn reads. */
const inFlight = Number(process.env.BENCH_CALLGRIND_IN_FLIGHT ?? 1)
const warmCalls = Number(process.env.BENCH_CALLGRIND_WARM ?? 3000)
const outDir = process.env.BENCH_CALLGRIND_DIR ?? tmpdir()
const outFile = path.join(outDir, `callgrind.${mode}.${process.pid}.out`)
const callgrind = ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${outFile}`]

async function run(client: McpHttp, sessions: string[], count: number, offset: number): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      const n = offset + next++
      const text = await client.callTool('echo', { message: `p${n}` }, sessions[n % sessions.length])
      if (text !== `echo: p${n}`) throw new Error(`unexpected answer ${text}`)
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
}

function callgrindControl(args: string[], pid: number): void {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: ['ignore', 'ignore', 'inherit'] })
}

function totalIr(file: string): number {
  // The `summary:`/`totals:` line holds the Ir of everything collected.
  const line = readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('totals:') || l.startsWith('summary:'))
  return Number(line?.split(' ')[1])
}

/** The gateway and the bench handler as two plain ES modules (dependencies stay in node_modules). */
async function bundle(): Promise<{ edge: string; handler: string }> {
  const edge = path.join(ROOT, `bench/.callgrind-edge-${process.pid}.mjs`)
  const handler = path.join(ROOT, `bench/.callgrind-handler-${process.pid}.mjs`)
  const common: BuildOptions = { bundle: true, platform: 'node', format: 'esm', packages: 'external', conditions: ['mcp-edge-source'], logLevel: 'error' }
  // Both sit in the checkout, so their bare imports resolve to the checkout's node_modules.
  await build({ ...common, entryPoints: [path.join(ROOT, 'bench/servers/edge.ts')], outfile: edge })
  // 'mcp-edge' goes inside the handler's bundle, as sources (the package's own default is dist/).
  await build({ ...common, alias: { 'mcp-edge': path.join(ROOT, 'gateway/index.ts') }, entryPoints: [path.join(ROOT, 'bench/handlers/bench.ts')], outfile: handler })
  return { edge, handler }
}

/** mcp-edge from the bundle, under callgrind, with `route`'s keys over the bench route (as servers.ts's edge config). */
async function startMeasured(files: { edge: string; handler: string }, route: Record<string, unknown>): Promise<RunningServer> {
  const config = {
    // Port 0: the server tells its address over IPC (bench/servers/edge.ts) once it listens.
    listen: { host: '127.0.0.1', port: 0 },
    workers: 1,
    store: { type: 'memory' },
    log: { level: 'info' },
    connections: { max_per_address: 0 },
    routes: [{ location: '/mcp', handler: files.handler, server: { name: 'bench', version: '1.0.0' }, max_sessions: 100_000, ...route }],
  }
  const child = spawn(callgrind[0]!, [...callgrind.slice(1), process.execPath, files.edge], {
    cwd: ROOT,
    env: { ...process.env, BENCH_EDGE_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const url = await Promise.race([
    new Promise<string>((resolve) => child.on('message', (message: { listening?: string }) => message.listening !== undefined && resolve(message.listening))),
    exited.then((code) => Promise.reject(new Error(`the measured server exited with code ${code} before listening`))),
  ])
  return {
    url: `${url}/mcp`,
    pid: child.pid!,
    measure: () => Promise.reject(new Error('not here')),
    snapshot: () => Promise.reject(new Error('not here')),
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await exited
    },
  }
}

let upstream: RunningServer | undefined
let proxy: RunningServer | undefined
try {
  const files = await bundle()
  if (mode === 'direct') upstream = await startMeasured(files, {})
  else {
    upstream = await startServer({ kind: 'edge' })
    proxy = await startMeasured(files, { handler: undefined, prefix: 'never', upstreams: [{ name: 'up', url: upstream.url, health_interval: 3600 }] })
  }
  const measured = proxy ?? upstream
  const client = new McpHttp(measured.url, 256)
  const sessions = await Promise.all(Array.from({ length: sessionsCount }, () => client.initialize()))
  await run(client, sessions, warmCalls, 0)
  callgrindControl(['-i', 'on'], measured.pid)
  await run(client, sessions, calls, warmCalls)
  // A dump of what the counted calls cost (switching instrumentation off would drop the counts).
  callgrindControl(['--dump=counted'], measured.pid)
  client.close()
  await proxy?.stop()
  proxy = undefined
  if (mode === 'direct') {
    await upstream.stop()
    upstream = undefined
  }
  // The dump of the counted calls is numbered (<file>.1); the one at exit is <file> itself.
  const file = readdirSync(outDir).map((name) => path.join(outDir, name)).find((name) => name.startsWith(`${outFile}.`))!
  const ir = totalIr(file)
  console.log(JSON.stringify({ mode, calls, ir, irPerCall: Math.round(ir / calls), file }))
} finally {
  await proxy?.stop()
  await upstream?.stop()
  for (const kind of ['edge', 'handler']) rmSync(path.join(ROOT, `bench/.callgrind-${kind}-${process.pid}.mjs`), { force: true })
}
