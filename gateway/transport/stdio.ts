/**
 * The stdio transport (MCP 2025-11-25 §Transports, stdio): one route served over a byte stream pair
 * as newline-delimited JSON, one session per process (message-session.ts). Logs never go to the
 * output stream: it carries JSON-RPC only.
 *
 *   input ─► lines (≤ maxMessageSize bytes; longer ─► -32600) ─► MessageSession ─► McpEndpoint
 *   output ◄─ one JSON-RPC message per line ◄─ request sinks, the session outlet
 *
 *   input ends ─► server→client requests fail at once (no answer can come) ─► requests in flight
 *               settle ─► session deleted ─► done
 *   stop()     ─► session deleted (requests in flight see their signal fire) ─► they settle ─► done
 *   (done waits, up to OUTPUT_FLUSH_MS, for the output to take every line written: the process exits after it)
 */
import { openCaller } from '../wire/caller.ts'
import type { Logger } from 'pino'
import type { Readable, Writable } from 'node:stream'
import { RpcCode } from '../wire/errors.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { errorMessage } from '../wire/jsonrpc.ts'
import { MessageSession } from './message-session.ts'

const NEWLINE = 0x0a
/**
 * The longest `done` waits, once the session is over, for the output to take what was written: a
 * client reading slowly still gets every answer before the process exits, and one that stopped
 * reading cannot keep it alive.
 */
export const OUTPUT_FLUSH_MS = 10_000

export interface StdioOptions {
  input: Readable
  output: Writable
  /** Longest accepted line, in bytes. */
  maxMessageSize: number
  logger: Logger
}

export interface StdioServer {
  /** Resolves once the input ended or `stop` was called, requests settled and the session is gone. */
  readonly done: Promise<void>
  /** Ends the session now: requests in flight are cancelled. */
  stop(reason: string): void
}

/** Serves `endpoint` on `input`/`output` until the input ends. */
export function serveStdio(endpoint: McpEndpoint, options: StdioOptions): StdioServer {
  const { input, output, maxMessageSize, logger } = options
  let writable = true
  // Lines written and not yet taken by the output (its callback not called): the exit waits for them.
  let unflushed = 0
  let onFlushed: (() => void) | undefined
  const written = (): void => {
    if (--unflushed === 0) onFlushed?.()
  }
  const flushed = (): Promise<void> => {
    if (unflushed === 0 || !writable) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, OUTPUT_FLUSH_MS)
      timer.unref()
      onFlushed = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }
  const session = new MessageSession(endpoint, {
    send: (text) => {
      if (!writable) return false
      unflushed++
      output.write(`${text}\n`, written)
      return true
    },
    close: (reason) => stop(reason),
  }, logger, openCaller('stdio'))

  let pending: Buffer[] = []
  let pendingBytes = 0
  let oversize = false

  const take = (piece: Buffer): void => {
    if (oversize || piece.length === 0) return
    pendingBytes += piece.length
    if (pendingBytes > maxMessageSize) {
      oversize = true
      pending = []
      return
    }
    pending.push(piece)
  }

  const line = (): void => {
    if (oversize) {
      session.send(errorMessage(null, RpcCode.InvalidRequest, `Invalid Request: message over ${maxMessageSize} bytes`))
    } else {
      const text = Buffer.concat(pending).toString('utf8').replace(/\r$/, '')
      if (text.trim() !== '') session.receive(text)
    }
    pending = []
    pendingBytes = 0
    oversize = false
  }

  const onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    let start = 0
    for (let end = bytes.indexOf(NEWLINE); end >= 0; end = bytes.indexOf(NEWLINE, start)) {
      take(bytes.subarray(start, end))
      line()
      start = end + 1
    }
    take(bytes.subarray(start))
  }

  let resolveDone!: () => void
  const done = new Promise<void>((resolve) => (resolveDone = resolve))
  let finishing: Promise<void> | undefined
  const finish = (): Promise<void> =>
    (finishing ??= (async () => {
      input.off('data', onData)
      input.pause()
      await session.stopListening('the client closed its input: it can no longer answer')
      await session.settled()
      await session.end()
      await flushed()
      logger.info('stdio session ended')
      resolveDone()
    })())
  const stop = (reason: string): void => {
    logger.info({ reason }, 'stdio session stopping')
    void session.end().then(finish)
  }

  input.on('data', onData)
  input.once('end', () => void finish())
  input.on('error', (error) => {
    logger.warn({ err: error }, 'stdio input failed')
    void finish()
  })
  output.on('error', (error) => {
    // The client stopped reading (EPIPE): nothing more can reach it.
    if (!writable) return
    writable = false
    onFlushed?.()
    stop(`output failed: ${error.message}`)
  })
  logger.info('stdio session started')
  return { done, stop }
}
