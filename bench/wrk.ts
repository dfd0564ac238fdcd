/**
 * Runs wrk (pinned to the load core) with wrk/tools-call.lua (tools/call, or tools/list) and reads its report: req/s and the
 * latency distribution from wrk's own output, the answer checks from the script's BENCH_CHECK line,
 * socket errors added to the errors. wrk runs under `sh -c '…; times'` so its CPU time is known: a
 * load generator near 100% of its core means the req/s measured is a floor, not the server's limit.
 */
import { execFileSync, spawn } from 'node:child_process'
import path from 'node:path'
import { LOAD_CORE, pinned } from './cpu.ts'
import { ROOT } from './servers.ts'

const SCRIPT = path.join(ROOT, 'bench/wrk/tools-call.lua')

export interface WrkLoad {
  /** Tool to call; its answer must be `echo: m<id>`. */
  tool: string
  /** Progress notifications each answer must carry (0: plain JSON answers). */
  progress?: number
  /** MCP-Protocol-Version header (none when omitted). */
  protocolVersion?: string
  /** The 2026-07-28 stateless wire: the `_meta` envelope and the Mcp-Method / Mcp-Name headers. */
  stateless?: boolean
  /** Over WebSocket instead (ws-load.ts, not wrk): one session per connection. */
  websocket?: boolean
  /** The Authorization header of every request (a JWT row). */
  authorization?: string
  /** JSON members added to every call's arguments after `message` (raw text, e.g. `"rows":[…]`). */
  extraArguments?: string
  /** No MCP: GET this path + `m<id>` on the server (a REST path ending in a query parameter), answered `echo: m<id>`. */
  rest?: string
  /** Tool search's meta-tool: every request is `call_tool {name: tool, arguments}` (a `catalogue: search` route). */
  viaCallTool?: boolean
  /** The same message in every call (answered `echo: <it>`), where a row needs the same arguments every time (a result cache). */
  message?: string
  /** Every request a tools/list instead of a call; each answer must contain `expect`. */
  list?: { expect: string }
}

export interface WrkOptions {
  url: string
  sessions: string[]
  load: WrkLoad
  durationS: number
  connections: number
  threads: number
  /** Added to every JSON-RPC id, so successive runs on the same sessions never reuse one. */
  idBase: number
}

export interface WrkResult {
  requests: number
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  /** CPU wrk used, in % of one core over the run (user + system). */
  loadCpuPct?: number
  /** Answers that failed the checks, plus socket errors (connect, read, write, timeout). */
  errors: number
  checked: number
  sample?: string
}

/** undefined when wrk is on PATH, otherwise how to get it. */
export function wrkMissing(): string | undefined {
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' })
    return undefined
  } catch (error) {
    // `wrk -v` prints its version and exits 1; only a spawn failure means it is missing.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined
    return 'wrk is not installed. On Debian/Ubuntu: sudo apt-get install -y wrk (https://github.com/wg/wrk for others)'
  }
}

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const args = [
    `-t${options.threads}`, `-c${options.connections}`, `-d${options.durationS}s`,
    '--timeout', '5s', '--latency', '-s', SCRIPT, options.url,
  ]
  const env = {
    ...process.env,
    BENCH_TOOL: options.load.tool,
    BENCH_PROGRESS: String(options.load.progress ?? 0),
    BENCH_SESSIONS: options.sessions.join(','),
    BENCH_VERSION: options.load.protocolVersion ?? '',
    BENCH_STATELESS: options.load.stateless === true ? '1' : '0',
    BENCH_THREADS: String(options.threads),
    BENCH_ID_BASE: String(options.idBase),
    BENCH_AUTHORIZATION: options.load.authorization ?? '',
    BENCH_EXTRA: options.load.extraArguments ?? '',
    BENCH_REST: options.load.rest ?? '',
    BENCH_VIA_CALL_TOOL: options.load.viaCallTool === true ? '1' : '0',
    BENCH_MESSAGE: options.load.message ?? '',
    BENCH_LIST: options.load.list === undefined ? '0' : '1',
    BENCH_EXPECT: options.load.list?.expect ?? '',
  }
  const [command, commandArgs] = pinned(LOAD_CORE, 'wrk', args)
  const started = performance.now()
  const output = await new Promise<string>((resolve, reject) => {
    // `times` prints the shell's CPU times, then its children's: wrk's.
    const script = '"$@"; status=$?; times; exit $status'
    const child = spawn('sh', ['-c', script, 'sh', command, ...commandArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let text = ''
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}:\n${text}`))))
  })
  const result = parseWrk(output)
  const times = [...output.matchAll(/^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/gm)].at(-1)
  if (times !== undefined) {
    const cpuS = Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4])
    result.loadCpuPct = Math.round((cpuS / ((performance.now() - started) / 1000)) * 100)
  }
  return result
}

/** wrk's duration units (`us`, `ms`, `s`, `m`) in milliseconds. */
function toMs(value: string, unit: string): number {
  const n = Number(value)
  const ms = unit === 'us' ? n / 1000 : unit === 'ms' ? n : unit === 's' ? n * 1000 : n * 60_000
  return Math.round(ms * 1000) / 1000
}

export function parseWrk(output: string): WrkResult {
  const number = (pattern: RegExp): number | undefined => {
    const match = pattern.exec(output)
    return match === null ? undefined : Number(match[1])
  }
  const percentile = (p: number): number => {
    const match = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(output)
    if (match === null) throw new Error(`no ${p}% line in wrk's latency distribution:\n${output}`)
    return toMs(match[1]!, match[2]!)
  }
  const check = /^BENCH_CHECK checked=(\d+) errors=(\d+)/m.exec(output)
  if (check === null) throw new Error(`wrk's script printed no BENCH_CHECK line:\n${output}`)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  const socketErrors = socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0)
  const requests = number(/^\s*(\d+) requests in /m)
  const reqPerSec = number(/^Requests\/sec:\s+([\d.]+)/m)
  if (requests === undefined || reqPerSec === undefined) throw new Error(`cannot read wrk's summary:\n${output}`)
  const sample = /^BENCH_SAMPLE (.*)$/m.exec(output)?.[1] ?? (socketErrors > 0 ? `socket errors: ${socket![0].slice('Socket errors: '.length)}` : undefined)
  return {
    requests,
    reqPerSec,
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    errors: Number(check[2]) + socketErrors,
    checked: Number(check[1]),
    ...(sample === undefined ? {} : { sample }),
  }
}
