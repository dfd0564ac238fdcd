/**
 * The WebSocket load generator (wrk speaks HTTP only). `connections` WebSocket connections, each its
 * own MCP session (initialize + notifications/initialized on the `mcp` subprotocol), each keeping one
 * tools/call in flight as wrk's connections do. Every answer is checked as wrk/tools-call.lua checks
 * it: the id this connection sent and has not seen answered, and the text exactly `echo: m<id>`.
 *
 * It runs as its own process pinned to the load core (`runWsLoad` starts it), so it never shares the
 * server's core or the runner's event loop, and reports the CPU it used: a generator near 100% of
 * its core measured itself, not the server, and the row says so.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import WebSocket from 'ws'
import { LOAD_CORE, pinned } from './cpu.ts'
import type { WrkResult } from './wrk.ts'

export interface WsLoadOptions {
  /** The route's HTTP URL; the generator connects to the same path with ws://. */
  url: string
  connections: number
  durationS: number
  tool: string
  protocolVersion: string
  /** Added to every JSON-RPC id, so no two runs share one. */
  idBase: number
}

const SELF = fileURLToPath(import.meta.url)
const RESULT_PREFIX = 'BENCH_WS_RESULT '

/** Runs the generator in its own pinned process and returns what it measured. */
export async function runWsLoad(options: WsLoadOptions): Promise<WrkResult> {
  const [command, args] = pinned(LOAD_CORE, process.execPath, ['--import', 'tsx', SELF, JSON.stringify(options)])
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let text = ''
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`the WebSocket load generator exited with ${code}:\n${text}`))))
  })
  const line = output.split('\n').find((entry) => entry.startsWith(RESULT_PREFIX))
  if (line === undefined) throw new Error(`the WebSocket load generator printed no result:\n${output}`)
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as WrkResult
}

interface Tally {
  running: boolean
  checked: number
  errors: number
  sample: string | undefined
  latenciesUs: number[]
}

/** One connection's session: initialized, then tools/call after tools/call until the run ends. */
class Connection {
  readonly #socket: WebSocket
  readonly #options: WsLoadOptions
  readonly #tally: Tally
  readonly #stride: number
  readonly #offset: number
  #seq = 0
  #pendingId = -1
  #sentAt = 0
  #idle: (() => void) | undefined

  private constructor(socket: WebSocket, options: WsLoadOptions, tally: Tally, offset: number) {
    this.#socket = socket
    this.#options = options
    this.#tally = tally
    this.#stride = options.connections
    this.#offset = offset
  }

  static async open(options: WsLoadOptions, tally: Tally, offset: number): Promise<Connection> {
    const socket = new WebSocket(options.url.replace(/^http/, 'ws'), 'mcp')
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    const initialized = new Promise<void>((resolve, reject) => {
      socket.once('message', (data) => (String(data).includes('"protocolVersion"') ? resolve() : reject(new Error(`initialize failed: ${String(data)}`))))
    })
    socket.send(JSON.stringify({
      jsonrpc: '2.0', id: 0, method: 'initialize',
      params: { protocolVersion: options.protocolVersion, capabilities: {}, clientInfo: { name: 'mcp-edge-bench', version: '1' } },
    }))
    await initialized
    socket.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    const connection = new Connection(socket, options, tally, offset)
    socket.on('message', (data) => connection.#answer(String(data)))
    socket.on('error', (error) => connection.#fail(`socket error: ${error.message}`))
    return connection
  }

  start(): void {
    this.#send()
  }

  /** Resolves once the request in flight (if any) is answered. */
  drained(): Promise<void> {
    if (this.#pendingId < 0) return Promise.resolve()
    return new Promise((resolve) => (this.#idle = resolve))
  }

  close(): void {
    this.#socket.close()
  }

  #send(): void {
    const id = this.#options.idBase + ++this.#seq * this.#stride + this.#offset
    this.#pendingId = id
    this.#sentAt = performance.now()
    this.#socket.send(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${this.#options.tool}","arguments":{"message":"m${id}"}}}`)
  }

  #answer(data: string): void {
    const id = this.#pendingId
    if (id < 0 || !data.includes(`"id":${id},`)) {
      this.#fail(`an answer to no request in flight (${id}): ${data.slice(0, 200)}`)
      return
    }
    const tally = this.#tally
    tally.checked++
    tally.latenciesUs.push(Math.round((performance.now() - this.#sentAt) * 1000))
    if (!data.includes(`"echo: m${id}"`)) this.#fail(`wrong text for id ${id}: ${data.slice(0, 200)}`)
    this.#pendingId = -1
    if (tally.running) this.#send()
    else this.#idle?.()
  }

  #fail(problem: string): void {
    this.#tally.errors++
    this.#tally.sample ??= problem
  }
}

function percentileMs(sortedUs: number[], p: number): number {
  if (sortedUs.length === 0) return 0
  return sortedUs[Math.min(sortedUs.length - 1, Math.floor((p / 100) * sortedUs.length))]! / 1000
}

async function main(options: WsLoadOptions): Promise<void> {
  const tally: Tally = { running: true, checked: 0, errors: 0, sample: undefined, latenciesUs: [] }
  const connections = await Promise.all(Array.from({ length: options.connections }, (_, offset) => Connection.open(options, tally, offset)))
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  for (const connection of connections) connection.start()
  await new Promise((resolve) => setTimeout(resolve, options.durationS * 1000))
  tally.running = false
  const checkedAtDeadline = tally.checked
  const elapsedS = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  await Promise.race([Promise.all(connections.map((connection) => connection.drained())), new Promise((resolve) => setTimeout(resolve, 5000))])
  for (const connection of connections) connection.close()
  const sorted = tally.latenciesUs.sort((a, b) => a - b)
  const result: WrkResult = {
    requests: checkedAtDeadline,
    reqPerSec: checkedAtDeadline / elapsedS,
    p50Ms: percentileMs(sorted, 50),
    p99Ms: percentileMs(sorted, 99),
    loadCpuPct: Math.round(((cpu.user + cpu.system) / 1e6 / elapsedS) * 100),
    errors: tally.errors,
    checked: tally.checked,
    ...(tally.sample === undefined ? {} : { sample: tally.sample }),
  }
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`)
}

if (process.argv[1] === SELF) {
  main(JSON.parse(process.argv[2]!) as WsLoadOptions).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`)
      process.exit(1)
    },
  )
}
