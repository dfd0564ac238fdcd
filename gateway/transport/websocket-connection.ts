/**
 * One WebSocket connection carrying one MCP session (message-session.ts): text frames in and out,
 * the frame-level rules here.
 *
 *   text frame ─► size ─► MessageSession.receive        binary frame ─► close 1003
 *   MessageSession ─► send ─► backlog over limit? ─► close 1008 (the client is not reading)
 *   every ping interval: no pong since the last ping? ─► terminate
 *   no initialize within initialize_timeout ─► close 1008; no message for idle_timeout ─► close 1000
 *   closed (either side, any way) ─► session deleted: in-flight requests see their signal fire
 */
import type { Caller } from '../wire/caller.ts'
import type { Logger } from 'pino'
import type { RawData, WebSocket } from 'ws'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { ChannelLimits } from './channel-limits.ts'
import { MessageSession } from './message-session.ts'
import { SendBacklog, type SendBufferLimits } from './send-backlog.ts'

/** WebSocket close codes this transport uses (RFC 6455 §7.4.1). */
export const CloseCode = {
  Normal: 1000,
  GoingAway: 1001,
  UnsupportedData: 1003,
  PolicyViolation: 1008,
  MessageTooBig: 1009,
} as const

/** How long a closing connection waits for the peer's close frame before dropping the socket. */
const CLOSE_GRACE_MS = 1000

export interface ConnectionLimits {
  /** Largest accepted message, in bytes. */
  maxMessageSize: number
  /** The unsent backlog (bytes, messages) over which a client that does not read is dropped. */
  sendBuffer: SendBufferLimits
  /** Milliseconds between pings; a peer that has not answered the previous one is dropped. */
  pingIntervalMs: number
  /** Milliseconds a new connection has to initialize (or send a 2026-07-28 request). */
  initializeTimeoutMs: number
  /** Milliseconds without a message from the client before the connection is closed. */
  idleTimeoutMs: number
}

export class WebSocketConnection {
  /** Resolves once the socket is closed and the session deleted. */
  readonly ended: Promise<void>
  readonly #socket: WebSocket
  readonly #limits: ConnectionLimits
  readonly #session: MessageSession
  readonly #pinger: NodeJS.Timeout
  readonly #backlog: SendBacklog
  #closing = false
  #alive = true
  /** When the client last sent a message (performance.now()); the watch timer reads it, no timer per message. */
  #lastMessageAt = performance.now()
  /** First the initialize deadline, then the idle check, re-armed only when it fires. */
  #watch: NodeJS.Timeout

  constructor(socket: WebSocket, endpoint: McpEndpoint, limits: ConnectionLimits, logger: Logger, caller: Caller, routeLimits?: ChannelLimits) {
    this.#socket = socket
    this.#limits = limits
    this.#backlog = new SendBacklog(limits.sendBuffer)
    this.#session = new MessageSession(endpoint, {
      send: (text) => this.#send(text),
      close: (reason) => this.close(CloseCode.Normal, reason),
    }, logger, caller, routeLimits)
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('message', (data, isBinary) => this.#onMessage(data, isBinary))
    socket.on('pong', () => (this.#alive = true))
    socket.on('close', (code, reason) => {
      this.#closing = true
      clearInterval(this.#pinger)
      clearTimeout(this.#watch)
      this.#session.logger.info({ code, reason: reason.toString() }, 'websocket closed')
    })
    this.ended = socketClosed.then(() => this.#session.end())
    this.#pinger = setInterval(() => this.#ping(), limits.pingIntervalMs)
    this.#pinger.unref()
    this.#watch = setTimeout(() => this.#checkInitialized(), limits.initializeTimeoutMs)
    this.#watch.unref()
  }

  /**
   * Closes with `code` and ends the session now, without waiting for the peer's close frame; a peer
   * that does not answer it soon (it is not reading) is dropped.
   */
  close(code: number, reason: string): void {
    if (this.#closing) return
    this.#closing = true
    clearInterval(this.#pinger)
    clearTimeout(this.#watch)
    this.#session.logger.info({ code, reason }, 'closing websocket')
    this.#socket.close(code, reason)
    setTimeout(() => this.#socket.terminate(), CLOSE_GRACE_MS).unref()
    void this.#session.end()
  }

  /** Closes for a gateway shutdown; resolves once the socket is closed and the session deleted. */
  shutdown(): Promise<void> {
    this.close(CloseCode.GoingAway, 'the gateway is shutting down')
    return this.ended
  }

  #checkInitialized(): void {
    if (this.#session.opened) return this.#checkIdle()
    this.close(CloseCode.PolicyViolation, `no initialize within ${this.#limits.initializeTimeoutMs / 1000} s`)
  }

  /** Closes a connection silent for the idle timeout; otherwise sleeps until it could be. */
  #checkIdle(): void {
    const left = this.#lastMessageAt + this.#limits.idleTimeoutMs - performance.now()
    if (left <= 0) return this.close(CloseCode.Normal, `idle for ${this.#limits.idleTimeoutMs / 1000} s`)
    this.#watch = setTimeout(() => this.#checkIdle(), left)
    this.#watch.unref()
  }

  #ping(): void {
    if (!this.#alive) {
      this.#session.logger.info('websocket peer missed a pong; dropping it')
      this.#closing = true
      clearInterval(this.#pinger)
      this.#socket.terminate()
      return
    }
    this.#alive = false
    this.#socket.ping()
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (this.#closing) return
    this.#lastMessageAt = performance.now()
    if (isBinary) {
      this.close(CloseCode.UnsupportedData, 'binary frames are not supported: send JSON-RPC as text')
      return
    }
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)
    if (bytes.length > this.#limits.maxMessageSize) {
      this.close(CloseCode.MessageTooBig, `message over ${this.#limits.maxMessageSize} bytes`)
      return
    }
    this.#session.receive(bytes.toString('utf8'))
  }

  #send(text: string): boolean {
    const socket = this.#socket
    if (this.#closing || socket.readyState !== socket.OPEN) return false
    if (!this.#backlog.admit(socket.bufferedAmount)) {
      this.close(CloseCode.PolicyViolation, 'the client is not reading: send backlog over limit')
      return false
    }
    socket.send(text)
    return true
  }
}
