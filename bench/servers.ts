/**
 * The servers under test, each in its own child process on the server core: a TypeScript script
 * (the baselines, run with `--import tsx`) or mcp-edge itself with a generated config, through
 * `servers/edge.ts` (configFromObject + startGateway) or, for what only the CLI does (e.g. several
 * workers), through `gateway/bin.mjs start`. `servers/probe.mjs` is preloaded so the runner can ask
 * for a forced-GC memory reading over IPC.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { pinned, SERVER_CORES } from './cpu.ts'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PROBE = path.join(ROOT, 'bench/servers/probe.mjs')
const BENCH_HANDLER = path.join(ROOT, 'bench/handlers/bench.ts')

/** How to start one server under test. */
export type ServerSpec =
  | { kind: 'script'; entry: string; env?: Record<string, string> }
  | {
      kind: 'edge'
      /** The config's `store` block (memory when omitted). */
      store?: Record<string, unknown>
      workers?: number
      transports?: string[]
      /** Extra keys for the route. */
      route?: Record<string, unknown>
      /** `api` (default): servers/edge.ts; `cli`: the mcp-edge command with the config as a file. */
      via?: 'api' | 'cli'
      /** The config as a user writes it: listen and one route, every other key at its default. */
      defaults?: true
      /** Extra top-level keys (e.g. `admin`), over either form. */
      top?: Record<string, unknown>
    }

export interface StartOptions {
  /** Starts node with --expose-gc, so `measure()` reads memory after full collections. */
  gc?: boolean
  /** More node/V8 flags for the server (e.g. the soak's fixed young generation). */
  nodeFlags?: string[]
  /** Writes a V8 CPU profile (and the gateway's source maps) into this folder when the server stops. */
  cpuProfileDir?: string
  /**
   * mcp-edge's log level (default `info`, as users run it: one access line per request). Its log goes
   * to a file, as the issue measured it, not to a pipe the runner (on the load core) would have to read.
   */
  logLevel?: string
}

/** process.memoryUsage() after forced full GCs, with each V8 heap space's committed and used bytes, by name. */
export type Memory = NodeJS.MemoryUsage & { spaces: Record<string, { size: number; used: number }> }

export interface RunningServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:40123/mcp. */
  readonly url: string
  /** The server's process (taskset execs it, so it is the node process itself). */
  readonly pid: number
  /** process.memoryUsage() of the server after forced full GCs. */
  measure(): Promise<Memory>
  /** Writes a V8 heap snapshot of the server into `file`; resolves with its path. */
  snapshot(file: string): Promise<string>
  /** SIGTERM (a clean exit, so a CPU profile gets written), SIGKILL after 10 s. */
  stop(): Promise<void>
}

/** A free loopback port (the kernel picks it; a race with another process is possible but harmless here). */
export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

function edgeConfig(spec: Extract<ServerSpec, { kind: 'edge' }>, port: number, logLevel: string): object {
  if (spec.defaults) {
    return { listen: { host: '127.0.0.1', port }, routes: [{ location: '/mcp', handler: BENCH_HANDLER, server: { name: 'bench', version: '1.0.0' } }], ...spec.top }
  }
  return {
    ...spec.top,
    listen: { host: '127.0.0.1', port },
    workers: spec.workers ?? 1,
    store: spec.store ?? { type: 'memory' },
    log: { level: logLevel },
    // Every client of the bench is one address (loopback): the fan-out alone holds 1,000 streams.
    connections: { max_per_address: 0 },
    routes: [
      {
        location: '/mcp',
        handler: BENCH_HANDLER,
        server: { name: 'bench', version: '1.0.0' },
        max_sessions: 100_000,
        ...(spec.transports === undefined ? {} : { transports: spec.transports }),
        ...spec.route,
      },
    ],
  }
}

/** Writes the config into a new temporary folder; the caller removes the folder. */
function configFile(config: object): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-edge-bench-'))
  const file = path.join(dir, 'gateway.yaml')
  // YAML is a superset of JSON, so the loader reads this as it reads any config file.
  writeFileSync(file, JSON.stringify(config, null, 2))
  return { dir, file }
}

export async function startServer(spec: ServerSpec, options: StartOptions = {}): Promise<RunningServer> {
  const port = await freePort()
  // The bench handlers import 'mcp-edge': from the checkout, that is the sources (package.json exports).
  const nodeFlags = ['--import', PROBE, '--conditions=mcp-edge-source']
  if (options.gc) nodeFlags.push('--expose-gc')
  if (options.nodeFlags !== undefined) nodeFlags.push(...options.nodeFlags)
  const env: Record<string, string> = { ...process.env as Record<string, string>, PORT: String(port), HOST: '127.0.0.1' }
  if (options.cpuProfileDir !== undefined) {
    nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`, '--enable-source-maps')
    env.BENCH_SOURCEMAPS = path.join(options.cpuProfileDir, `sourcemaps-${port}.json`)
    env.BENCH_SOURCE_DIRS = [path.join(ROOT, 'gateway'), path.join(ROOT, 'bench/handlers')].join(path.delimiter)
  }
  let args: string[]
  let configDir: string | undefined
  let logFile: string | undefined
  if (spec.kind === 'edge') {
    const config = edgeConfig(spec, port, options.logLevel ?? process.env.BENCH_LOG_LEVEL ?? 'info')
    const written = configFile(config)
    configDir = written.dir
    logFile = path.join(configDir, 'gateway.log')
    if (spec.via === 'cli') {
      args = [...nodeFlags, path.join(ROOT, 'gateway/bin.mjs'), 'start', '--config', written.file]
    } else {
      args = [...nodeFlags, '--import', 'tsx', path.join(ROOT, 'bench/servers/edge.ts')]
      env.BENCH_EDGE_CONFIG = JSON.stringify(config)
    }
  } else {
    args = [...nodeFlags, '--import', 'tsx', path.join(ROOT, spec.entry)]
    Object.assign(env, spec.env)
  }
  const [command, commandArgs] = pinned(SERVER_CORES, process.execPath, args)
  const logFd = logFile === undefined ? undefined : openSync(logFile, 'a')
  const child = spawn(command, commandArgs, { cwd: ROOT, env, stdio: ['ignore', logFd ?? 'pipe', 'pipe', 'ipc'] })
  if (logFd !== undefined) closeSync(logFd)
  const tailOf = tail(child)
  const output = (): string => {
    let logged = ''
    try {
      if (logFile !== undefined) logged = readFileSync(logFile, 'utf8').slice(-4096)
    } catch {
      // removed with its folder once the server exited
    }
    return tailOf() + logged
  }
  if (process.env.BENCH_DEBUG === '1') {
    child.stdout?.pipe(process.stderr)
    child.stderr?.pipe(process.stderr)
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  void exited.then(() => {
    if (configDir !== undefined) rmSync(configDir, { recursive: true, force: true })
  })
  try {
    await waitListening(port, exited)
  } catch (error) {
    child.kill('SIGKILL')
    throw new Error(`${(error as Error).message}\n${output()}`)
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid!,
    measure: () => measure(child),
    snapshot: (file) => ask<{ file: string }>(child, { cmd: 'snapshot', file }).then((answer) => answer.file),
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Keeps the last 4 KB of the child's output for error messages. */
function tail(child: ChildProcess): () => string {
  let kept = ''
  const keep = (chunk: Buffer): void => {
    kept = (kept + chunk.toString()).slice(-4096)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  return () => kept
}

/** Resolves once the port answers HTTP (any status); rejects if the child exits first or after 20 s. */
export async function waitListening(port: number, exited: Promise<number | null>): Promise<void> {
  let gone: number | null | undefined
  void exited.then((code) => (gone = code))
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    if (gone !== undefined) throw new Error(`server exited with code ${gone} before listening`)
    const answered = await new Promise<boolean>((resolve) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (response) => {
        response.resume()
        resolve(true)
      })
      request.on('error', () => resolve(false))
    })
    if (answered) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`server did not listen on port ${port} within 20 s`)
}

let askSeq = 0

/** Sends `message` to the probe (servers/probe.mjs) in the child; resolves with its answer. */
function ask<T>(child: ChildProcess, message: { cmd: string; [key: string]: unknown }): Promise<T> {
  const id = ++askSeq
  return new Promise((resolve) => {
    const onMessage = (answer: { reply?: number }): void => {
      if (answer.reply !== id) return
      child.off('message', onMessage)
      resolve(answer as T)
    }
    child.on('message', onMessage)
    child.send({ ...message, id })
  })
}

async function measure(child: ChildProcess): Promise<Memory> {
  const answer = await ask<{ memory: Memory; gc: boolean }>(child, { cmd: 'measure' })
  if (!answer.gc) throw new Error('the server was not started with --expose-gc')
  return answer.memory
}
