/**
 * The WebSocket client transport (not in the MCP spec; the de facto convention of the TS SDK v1 and
 * lua-resty-mcp): subprotocol `mcp`, one JSON-RPC message per UTF-8 text frame, a binary frame
 * closes the connection with 1003. Pings are answered by `ws` itself. Node 20 has no global
 * WebSocket, hence the `ws` package.
 */
import WebSocket from 'ws'
import type { Agent } from 'node:http'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import { connectionAgent, type TlsOptions } from './connection-options.ts'
import { ProtocolError, TimeoutError, TransportError } from './errors.ts'
import { TransportCallbacks, type Transport } from './transport.ts'

export interface WebSocketOptions {
  /** A `ws:` or `wss:` URL. */
  url: string | URL
  /** Sent as the `authorization` header of the handshake. */
  authorization?: string
  /** Extra handshake headers. */
  headers?: Record<string, string>
  /** Headers asked for before the handshake (credentials that expire or depend on the caller), over `headers`. */
  authorize?: () => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>
  /** Subprotocols offered; default `['mcp']`. The server must pick one of them. */
  protocols?: string[]
  /** Milliseconds to wait for the handshake; default 10 000 (0: no timeout). */
  connectTimeoutMs?: number
  /** Milliseconds close() waits for the closing handshake before dropping the socket; default 2000 (0: no timeout). */
  closeTimeoutMs?: number
  /** Largest accepted message in bytes; the `ws` default (100 MiB) otherwise. */
  maxPayload?: number
  /** TLS settings for a `wss:` URL (ca, cert, key, rejectUnauthorized). */
  tls?: TlsOptions
  /** An HTTP proxy (`http://[user:pass@]host:port`), reached with CONNECT. */
  proxy?: string | URL
}

export class WebSocketTransport extends TransportCallbacks implements Transport {
  readonly #options: WebSocketOptions
  #socket: WebSocket | undefined
  #agent: Agent | undefined
  #closed = false

  constructor(options: WebSocketOptions) {
    super()
    this.#options = options
  }

  start(): Promise<void> {
    if (this.#socket !== undefined || this.#closed) return Promise.reject(new TransportError('The transport was already started'))
    const authorize = this.#options.authorize
    if (authorize === undefined) return this.#open(undefined)
    const answer = authorize()
    return answer instanceof Promise ? answer.then((headers) => this.#open(headers)) : this.#open(answer)
  }

  #open(authorized: Readonly<Record<string, string>> | undefined): Promise<void> {
    if (this.#socket !== undefined || this.#closed) return Promise.reject(new TransportError('The transport was already started'))
    const { url, authorization, protocols = ['mcp'], connectTimeoutMs = 10_000 } = this.#options
    const headers: Record<string, string> = { ...this.#options.headers, ...authorized }
    if (authorization !== undefined) headers.authorization = authorization
    const agent = connectionAgent(new URL(url), this.#options)
    this.#agent = agent
    const socket = new WebSocket(url, protocols, { headers, handshakeTimeout: connectTimeoutMs, maxPayload: this.#options.maxPayload, agent, ...this.#options.tls })
    this.#socket = socket
    return new Promise<void>((resolve, reject) => {
      let opened = false
      socket.once('unexpected-response', (request, response) => {
        response.resume()
        request.destroy()
        const challenge = response.headers['www-authenticate']
        reject(new TransportError(`WebSocket handshake with ${url} refused: HTTP ${response.statusCode}`, { status: response.statusCode, challenge }))
      })
      socket.once('open', () => {
        opened = true
        resolve()
      })
      socket.on('error', (error) => {
        if (opened) return this.onerror?.(new TransportError(`WebSocket error: ${error.message}`, { cause: error }))
        reject(/timeout/i.test(error.message)
          ? new TimeoutError(`WebSocket handshake with ${url} took over ${connectTimeoutMs} ms`, connectTimeoutMs, { cause: error })
          : new TransportError(`WebSocket connection to ${url} failed: ${error.message}`, { cause: error }))
      })
      socket.on('message', (data, isBinary) => this.#receive(data, isBinary))
      socket.once('close', () => {
        this.#closed = true
        this.#agent?.destroy()
        if (opened) this.onclose?.()
      })
    })
  }

  send(message: JsonRpcMessage): Promise<void> {
    const socket = this.#socket
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) return Promise.reject(new TransportError('The WebSocket is not open'))
    return new Promise((resolve, reject) => {
      socket.send(JSON.stringify(message), (error) =>
        error ? reject(new TransportError(`WebSocket send failed: ${error.message}`, { cause: error })) : resolve())
    })
  }

  async close(): Promise<void> {
    const socket = this.#socket
    if (socket === undefined || socket.readyState === WebSocket.CLOSED) {
      this.#closed = true
      return
    }
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.close(1000)
    const closeTimeoutMs = this.#options.closeTimeoutMs ?? 2000
    const timer = closeTimeoutMs === 0 ? undefined : setTimeout(() => socket.terminate(), closeTimeoutMs)
    await closed
    clearTimeout(timer)
  }

  #receive(data: WebSocket.RawData, isBinary: boolean): void {
    if (isBinary) {
      this.onerror?.(new ProtocolError('The server sent a binary frame; MCP over WebSocket uses text frames'))
      this.#socket?.close(1003, 'unsupported data type')
      return
    }
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8')
    let message: unknown
    try {
      message = JSON.parse(text)
    } catch {
      this.onerror?.(new ProtocolError(`The server sent a frame that is not JSON: ${text.slice(0, 200)}`))
      return
    }
    this.onmessage?.(message as JsonRpcMessage)
  }
}
