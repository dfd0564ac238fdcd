/**
 * Instructions per call under callgrind: a figure that a loaded machine does not move (CPU time does),
 * for comparing two versions of the proxy hop or of the hot path. Not part of `npm run bench`.
 *
 *   npx tsx bench/callgrind-proxy.ts proxied [calls]   P (a proxy route to U) runs under callgrind
 *   npx tsx bench/callgrind-proxy.ts direct [calls]    U (handlers/bench.ts, serving the call itself) does
 *   npx tsx bench/callgrind-proxy.ts default [calls]   the `edge-default` row's server: `mcp-edge start`
 *                                                      (cli.ts) on a config naming only listen and the route
 *   npx tsx bench/callgrind-proxy.ts raw [calls]       the `fastify-raw` row's server (baselines/fastify-echo.ts)
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
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { build, type BuildOptions } from 'esbuild'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { McpHttp } from './mcp-http.ts'
import { ROOT, startServer, type RunningServer } from './servers.ts'

const MODES = ['proxied', 'direct', 'default', 'raw'] as const
const mode = MODES.find((known) => known === process.argv[2]) ?? 'proxied'
const calls = Number(process.argv[3] ?? 2000)
const sessionsCount = 20
/** Calls in flight: 1 by default, as a count with more depends on how many requests one event-loop turn reads. */
const inFlight = Number(process.env.BENCH_CALLGRIND_IN_FLIGHT ?? 1)
const warmCalls = Number(process.env.BENCH_CALLGRIND_WARM ?? 3000)
const outDir = process.env.BENCH_CALLGRIND_DIR ?? tmpdir()
const outFile = path.join(outDir, `callgrind.${mode}.${process.pid}.out`)
// One file per thread: the main thread's count leaves out V8's concurrent compiler and GC helpers,
// which after even 10,000 calls of warm-up were ~40 % of the total and moved by ~7 % between runs.
const callgrind = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${outFile}`]

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

const BUNDLED = ['edge', 'handler', 'cli', 'raw'] as const
const bundled = (kind: (typeof BUNDLED)[number]): string => path.join(ROOT, `bench/.callgrind-${kind}-${process.pid}.mjs`)

/** The measured server's entry and the bench handler as plain ES modules (dependencies stay in node_modules). */
async function bundle(): Promise<{ edge: string; handler: string }> {
  const entries = { proxied: 'bench/servers/edge.ts', direct: 'bench/servers/edge.ts', default: 'bench/servers/edge-cli.ts', raw: 'bench/baselines/fastify-echo.ts' }
  const edge = bundled(mode === 'default' ? 'cli' : mode === 'raw' ? 'raw' : 'edge')
  const handler = bundled('handler')
  const common: BuildOptions = { bundle: true, platform: 'node', format: 'esm', packages: 'external', conditions: ['mcp-edge-source'], logLevel: 'error' }
  // Both sit in the checkout, so their bare imports resolve to the checkout's node_modules.
  await build({ ...common, entryPoints: [path.join(ROOT, entries[mode])], outfile: edge })
  // 'mcp-edge' goes inside the handler's bundle, as sources (the package's own default is dist/).
  await build({ ...common, alias: { 'mcp-edge': path.join(ROOT, 'gateway/index.ts') }, entryPoints: [path.join(ROOT, 'bench/handlers/bench.ts')], outfile: handler })
  return { edge, handler }
}

/** mcp-edge from the bundle, under callgrind, with `route`'s keys over the bench route (as servers.ts's edge config). */
async function startMeasured(files: { edge: string; handler: string }, route: Record<string, unknown>): Promise<RunningServer> {
  // `default`: what servers.ts writes for `defaults: true`, every other key at its default.
  const config = mode === 'default' ? { listen: { host: '127.0.0.1', port: 0 }, routes: [{ location: '/mcp', handler: files.handler, server: { name: 'bench', version: '1.0.0' } }] } : {
    // Port 0: the server tells its address over IPC (bench/servers/edge.ts) once it listens.
    listen: { host: '127.0.0.1', port: 0 },
    workers: 1,
    store: { type: 'memory' },
    log: { level: 'info' },
    connections: { max_per_address: 0 },
    routes: [{ location: '/mcp', handler: files.handler, server: { name: 'bench', version: '1.0.0' }, max_sessions: 100_000, ...route }],
  }
  const configDir = mkdtempSync(path.join(tmpdir(), 'mcp-edge-callgrind-'))
  const configFile = path.join(configDir, 'gateway.yaml')
  // YAML is a superset of JSON: the CLI reads this as any config file.
  writeFileSync(configFile, JSON.stringify(config))
  // BENCH_CALLGRIND_NODE_FLAGS, e.g. --perf-basic-prof: /tmp/perf-<pid>.map names the JIT code's addresses.
  const nodeFlags = (process.env.BENCH_CALLGRIND_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '')
  const child = spawn(callgrind[0]!, [...callgrind.slice(1), process.execPath, ...nodeFlags, files.edge], {
    cwd: ROOT,
    env: { ...process.env, BENCH_EDGE_CONFIG: JSON.stringify(config), BENCH_EDGE_CONFIG_FILE: configFile },
    // The CLI (`default`) tells its address only in its "mcp-edge listening" log line.
    stdio: ['ignore', mode === 'default' ? 'pipe' : 'ignore', 'inherit', 'ipc'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  void exited.then(() => rmSync(configDir, { recursive: true, force: true }))
  const url = await Promise.race([
    new Promise<string>((resolve) => child.on('message', (message: { listening?: string }) => message.listening !== undefined && resolve(message.listening))),
    listeningLine(child),
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

/** The `url` of the CLI's "mcp-edge listening" line; the rest of its output (the access lines) drained. */
function listeningLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    if (child.stdout === null) return
    let pending = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) {
        const parsed = line.startsWith('{') ? (JSON.parse(line) as { msg?: string; url?: string }) : undefined
        if (parsed?.msg === 'mcp-edge listening' && parsed.url !== undefined) resolve(parsed.url)
      }
    })
  })
}

let upstream: RunningServer | undefined
let proxy: RunningServer | undefined
try {
  const files = await bundle()
  if (mode !== 'proxied') upstream = await startMeasured(files, {})
  else {
    upstream = await startServer({ kind: 'edge' })
    proxy = await startMeasured(files, { handler: undefined, prefix: 'never', upstreams: [{ name: 'up', url: upstream.url, health_interval: 3600 }] })
  }
  const measured = proxy ?? upstream
  const client = new McpHttp(measured.url, 256)
  // The raw Fastify echo knows no sessions: it answers any tools/call, the session header ignored.
  const sessions = mode === 'raw' ? ['none'] : await Promise.all(Array.from({ length: sessionsCount }, () => client.initialize()))
  await run(client, sessions, warmCalls, 0)
  callgrindControl(['-i', 'on'], measured.pid)
  await run(client, sessions, calls, warmCalls)
  // A dump of what the counted calls cost (switching instrumentation off would drop the counts).
  callgrindControl(['--dump=counted'], measured.pid)
  client.close()
  await proxy?.stop()
  proxy = undefined
  if (mode !== 'proxied') {
    await upstream.stop()
    upstream = undefined
  }
  // The dump of the counted calls is numbered (<file>.1); the one at exit is <file> itself.
  // With --separate-threads, <file>.1-01 is the main thread's part of that dump, -02… the others'.
  const dumps = readdirSync(outDir).map((name) => path.join(outDir, name)).filter((name) => name.startsWith(`${outFile}.1-`)).sort()
  const counts = dumps.map(totalIr)
  const ir = counts.reduce((sum, count) => sum + count, 0)
  const mainIr = counts[0] ?? 0
  console.log(JSON.stringify({ mode, calls, ir, irPerCall: Math.round(ir / calls), mainThreadIrPerCall: Math.round(mainIr / calls), file: dumps[0] }))
} finally {
  await proxy?.stop()
  await upstream?.stop()
  for (const kind of BUNDLED) rmSync(bundled(kind), { force: true })
}
