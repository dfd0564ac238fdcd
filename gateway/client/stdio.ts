/**
 * The stdio client transport: spawns the server and speaks newline-delimited JSON over its stdin
 * and stdout (MCP 2025-11-25 §Transports). Fully asynchronous, so a request to a stdio server can be
 * cancelled like any other (lua-resty-mcp's blocking client cannot).
 *
 *   send ─► stdin   (write timeout: the pipe must take the line in time)
 *   stdout ─► lines ─► onmessage   (read timeout: the server may not stay silent while a request awaits its answer)
 *   close ─► end stdin ─► wait exit ─► SIGTERM ─► wait ─► SIGKILL   (exit timeout between each step)
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { Readable } from 'node:stream'
import type { JsonRpcMessage, RequestId } from '../wire/jsonrpc.ts'
import { ProtocolError, TimeoutError, TransportError } from './errors.ts'
import { TransportCallbacks, type Transport } from './transport.ts'

export interface StdioOptions {
  /**
   * The program, or without `args` a whole command line (`'npx mcp-edge stdio --route /mcp'`), split
   * on spaces with '…' and "…" quoting and \ escapes, no shell involved.
   */
  command: string
  args?: string[]
  /** Variables added to the inherited environment (the whole environment when `inheritEnv` is false). */
  env?: Record<string, string>
  /** Start from this process's environment; default true. */
  inheritEnv?: boolean
  cwd?: string
  /** The server's stderr: passed through to ours (`inherit`, the default), dropped, or readable as `transport.stderr` (`pipe`). */
  stderr?: 'inherit' | 'ignore' | 'pipe'
  /** Milliseconds for stdin to take one message; default 10 000 (0: no timeout). */
  writeTimeoutMs?: number
  /** Milliseconds the server may stay silent while a request awaits its answer; none by default or with 0 (requests have their own timeout). */
  readTimeoutMs?: number
  /** Milliseconds close() waits for the process to exit after closing stdin, and again after SIGTERM; default 2000 (0: wait for the exit). */
  exitTimeoutMs?: number
}

export class StdioTransport extends TransportCallbacks implements Transport {
  readonly #options: StdioOptions
  #child: ChildProcess | undefined
  #exited: Promise<void> = Promise.resolve()
  #closing = false
  #gone = false
  #buffer = ''
  /** Requests sent and not yet answered, for the read timeout. */
  readonly #awaiting = new Set<RequestId>()
  #readTimer: NodeJS.Timeout | undefined

  constructor(options: StdioOptions) {
    super()
    this.#options = options
  }

  /** The server's stderr when `stderr: 'pipe'` was asked for. */
  get stderr(): Readable | null {
    return this.#child?.stderr ?? null
  }

  /** The server's process id once started. */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  start(): Promise<void> {
    if (this.#child !== undefined) return Promise.reject(new TransportError('The transport was already started'))
    const { cwd, inheritEnv = true, stderr = 'inherit' } = this.#options
    let command = this.#options.command
    let args = this.#options.args ?? []
    if (this.#options.args === undefined) {
      let words: string[]
      try {
        words = splitCommand(command)
      } catch (error) {
        return Promise.reject(error as Error)
      }
      if (words.length === 0) return Promise.reject(new TransportError('StdioTransport: the command is empty'))
      command = words[0]!
      args = words.slice(1)
    }
    const env = { ...(inheritEnv ? process.env : {}), ...this.#options.env }
    const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', stderr], windowsHide: true })
    this.#child = child
    this.#exited = new Promise((resolve) => child.once('close', () => resolve()))
    child.stdout!.setEncoding('utf8')
    child.stdout!.on('data', (chunk: string) => this.#receive(chunk))
    child.stdin!.on('error', (error) => {
      if (!this.#closing) this.onerror?.(new TransportError(`The server's stdin failed: ${error.message}`, { cause: error }))
    })
    return new Promise((resolve, reject) => {
      child.once('spawn', () => {
        child.once('close', (code, signal) => this.#ended(code, signal))
        resolve()
      })
      child.once('error', (error) => {
        this.#gone = true
        reject(new TransportError(`Could not start ${command}: ${error.message}`, { cause: error }))
      })
    })
  }

  send(message: JsonRpcMessage): Promise<void> {
    const stdin = this.#child?.stdin
    if (stdin == null || this.#gone || this.#closing) return Promise.reject(new TransportError('The server process is not running'))
    const requestId = 'method' in message && 'id' in message ? message.id : undefined
    if (requestId !== undefined) this.#await(requestId)
    if ('method' in message && message.method === 'notifications/cancelled') this.#answered(message.params?.requestId as RequestId)
    const timeoutMs = this.#options.writeTimeoutMs ?? 10_000
    return new Promise((resolve, reject) => {
      const timer = timeoutMs === 0 ? undefined : setTimeout(() => reject(new TimeoutError(`The server did not read its stdin within ${timeoutMs} ms`, timeoutMs, { requestId })), timeoutMs)
      stdin.write(JSON.stringify(message) + '\n', (error) => {
        clearTimeout(timer)
        if (error) reject(new TransportError(`Writing to the server failed: ${error.message}`, { requestId, cause: error }))
        else resolve()
      })
    })
  }

  async close(): Promise<void> {
    const child = this.#child
    if (child === undefined || this.#gone) return
    if (this.#closing) return this.#exited
    this.#closing = true
    this.#stopReadTimer()
    const timeoutMs = this.#options.exitTimeoutMs ?? 2000
    const exitedWithin = (ms: number): Promise<boolean> =>
      new Promise((resolve) => {
        const timer = ms === 0 ? undefined : setTimeout(() => resolve(false), ms)
        void this.#exited.then(() => {
          clearTimeout(timer)
          resolve(true)
        })
      })
    child.stdin?.end()
    if (await exitedWithin(timeoutMs)) return
    child.kill('SIGTERM')
    if (await exitedWithin(timeoutMs)) return
    child.kill('SIGKILL')
    await this.#exited
  }

  #receive(chunk: string): void {
    this.#restartReadTimer()
    this.#buffer += chunk
    let end: number
    while ((end = this.#buffer.indexOf('\n')) !== -1) {
      const line = this.#buffer.slice(0, end).replace(/\r$/, '')
      this.#buffer = this.#buffer.slice(end + 1)
      if (line.trim() === '') continue
      let message: JsonRpcMessage
      try {
        message = JSON.parse(line) as JsonRpcMessage
      } catch {
        this.onerror?.(new ProtocolError(`The server wrote a line that is not JSON: ${line.slice(0, 200)}`))
        continue
      }
      if (!('method' in message) && message.id !== null) this.#answered(message.id)
      this.onmessage?.(message)
    }
  }

  #ended(code: number | null, signal: NodeJS.Signals | null): void {
    this.#gone = true
    this.#stopReadTimer()
    if (!this.#closing) {
      const how = signal === null ? `with code ${code}` : `on ${signal}`
      this.onerror?.(new TransportError(`The server process exited ${how}`))
    }
    this.onclose?.()
  }

  #await(id: RequestId): void {
    this.#awaiting.add(id)
    if (this.#readTimer === undefined) this.#restartReadTimer()
  }

  #answered(id: RequestId): void {
    this.#awaiting.delete(id)
    if (this.#awaiting.size === 0) this.#stopReadTimer()
  }

  #restartReadTimer(): void {
    const timeoutMs = this.#options.readTimeoutMs
    this.#stopReadTimer()
    if (timeoutMs === undefined || timeoutMs === 0 || this.#awaiting.size === 0) return
    this.#readTimer = setTimeout(() => {
      this.#readTimer = undefined
      const waiting = [...this.#awaiting]
      this.#awaiting.clear()
      for (const requestId of waiting) {
        this.onerror?.(new TimeoutError(`The server wrote nothing for ${timeoutMs} ms while request ${requestId} awaited its answer`, timeoutMs, { requestId }))
      }
    }, timeoutMs)
  }

  #stopReadTimer(): void {
    clearTimeout(this.#readTimer)
    this.#readTimer = undefined
  }
}

/**
 * Splits a command line into words the way a shell would for plain words: spaces separate, '…'
 * keeps everything literally, "…" and a backslash outside quotes escape one character. No variables,
 * globs or operators: the words go to spawn() as they are.
 */
export function splitCommand(line: string): string[] {
  const words: string[] = []
  let word = ''
  let started = false
  let quote: "'" | '"' | undefined
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!
    if (quote !== undefined) {
      if (char === quote) quote = undefined
      else if (char === '\\' && quote === '"' && i + 1 < line.length) word += line[++i]
      else word += char
    } else if (char === "'" || char === '"') {
      quote = char
      started = true
    } else if (char === '\\' && i + 1 < line.length) {
      word += line[++i]
      started = true
    } else if (char === ' ' || char === '\t' || char === '\n') {
      if (started) words.push(word)
      word = ''
      started = false
    } else {
      word += char
      started = true
    }
  }
  if (quote !== undefined) throw new TransportError(`StdioTransport: unclosed ${quote} in the command`)
  if (started) words.push(word)
  return words
}
