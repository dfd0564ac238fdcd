/**
 * The HTTP+SSE client transport of MCP 2024-11-05 (deprecated since 2025-03-26, still spoken by many
 * servers in the field): one GET stream carries everything the server sends; its first `endpoint`
 * event names the URL the client POSTs each of its messages to.
 *
 *   start()   GET url (Accept: text/event-stream) ─► 200 ─► event: endpoint, data: /messages?sessionId=…
 *                 the endpoint, resolved against the stream's URL, must have the stream's origin
 *   send(m)   POST endpoint (JSON) ─► 2xx (202 Accepted), body ignored; the answer comes on the stream
 *   stream    event: message ─► onmessage;  stream ends or fails ─► onclose (the session is gone with it)
 *   close()   abort the stream (the server ends the session when it sees it go)
 *
 * The session lives exactly as long as the stream: a new stream is a new session, which the caller
 * (upstream-link.ts) re-initializes. So the transport never reconnects on its own; it closes, and the
 * next request opens a new one. Bounds: one event (`maxMessageBytes`), the requests awaiting their
 * answer on the stream (`maxPending`), the wait for the stream and its endpoint (`connectTimeoutMs`),
 * the wait for each POST's answer head (`timeoutMs`).
 */
import type { JsonRpcMessage, RequestId } from '../wire/jsonrpc.ts'
import { LightAbort } from '../wire/abort-like.ts'
import { ProtocolError, TimeoutError, TransportError } from './errors.ts'
import type { HttpAnswer, HttpExchange } from './http-answer.ts'
import { messageOf, readSse } from './sse-parser.ts'
import { DEFAULT_MAX_MESSAGE_BYTES, TransportCallbacks, type Transport } from './transport.ts'
import { ok } from './http-status.ts'
import { withTraceHeaders } from './trace-headers.ts'

export interface LegacySseOptions {
  /** The URL of the GET stream (`…/sse` on most servers). */
  url: string | URL
  /** How each HTTP exchange is made (http-exchange.ts: fetch, or node:http keep-alive agents). */
  exchange: HttpExchange
  /** Extra headers for every request (the upstream's own credentials). */
  headers?: Readonly<Record<string, string>>
  /** Headers asked for before every exchange (credentials that expire or depend on the caller), over `headers`. */
  authorize?: () => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>
  /** Milliseconds for the stream's head and its `endpoint` event; default 10 000. */
  connectTimeoutMs?: number
  /** Milliseconds for the answer head of one POST; default 30 000 (0: none). */
  timeoutMs?: number
  /** Largest event accepted on the stream, in bytes; a larger one ends the stream. Default 16 MiB. */
  maxMessageBytes?: number
  /** Requests sent and not yet answered on the stream; one more is refused. Default 1024. */
  maxPending?: number
}

const DEFAULT_MAX_PENDING = 1024
/** What a POST's answer body may hold before it is dropped (servers answer "Accepted"). */
const POST_ANSWER_BYTES = 65_536

export class LegacySseTransport extends TransportCallbacks implements Transport {
  readonly #options: LegacySseOptions
  readonly #url: URL
  /** Aborts the stream and every POST in flight. */
  readonly #abort = new LightAbort()
  #endpoint: URL | undefined
  #started = false
  #closed = false
  /** Requests sent whose answer has not come yet. */
  readonly #pending = new Set<RequestId>()

  constructor(options: LegacySseOptions) {
    super()
    this.#options = options
    this.#url = new URL(options.url)
  }

  /** The URL messages are POSTed to, once the stream named it. */
  get endpoint(): URL | undefined {
    return this.#endpoint
  }

  /** Opens the stream and resolves once its `endpoint` event came; rejects (and closes) otherwise. */
  async start(): Promise<void> {
    if (this.#started || this.#closed) throw new TransportError('The transport was already started')
    this.#started = true
    const connectTimeoutMs = this.#options.connectTimeoutMs ?? 10_000
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`GET ${this.#url} sent no endpoint event within ${connectTimeoutMs} ms`, connectTimeoutMs)), connectTimeoutMs)
    })
    try {
      await Promise.race([this.#open(), deadline])
    } catch (error) {
      this.#shutdown()
      throw error
    } finally {
      clearTimeout(timer)
    }
  }

  async #open(): Promise<void> {
    let response: HttpAnswer
    try {
      response = await this.#options.exchange(this.#url, 'GET', { ...(await this.#headers()), accept: 'text/event-stream' }, undefined, this.#abort)
    } catch (error) {
      throw new TransportError(`GET ${this.#url} failed: ${detailOf(error)}`, { cause: error })
    }
    if (response.status < 200 || response.status >= 300) {
      await response.cancel()
      throw new TransportError(`GET ${this.#url} answered HTTP ${response.status}`, { status: response.status, challenge: response.header('www-authenticate') })
    }
    const type = response.header('content-type') ?? ''
    if (!type.includes('text/event-stream')) {
      await response.cancel()
      throw new ProtocolError(`GET ${this.#url} answered "${type}", not an event stream`)
    }
    const events = readSse(response.chunks(), this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES)
    // The first event must name the endpoint: nothing can be sent before it.
    for (;;) {
      const next = await events.next().catch((error: unknown) => {
        throw error instanceof ProtocolError ? error : new TransportError(`The stream of ${this.#url} failed: ${detailOf(error)}`, { cause: error })
      })
      if (next.done === true) throw new TransportError(`The stream of ${this.#url} ended before its endpoint event`)
      if (next.value.event !== 'endpoint') continue
      this.#endpoint = this.#endpointOf(next.value.data)
      break
    }
    void this.#follow(events)
  }

  /** The POST URL an endpoint event names: relative to the stream's URL, and of its origin only. */
  #endpointOf(data: string): URL {
    let endpoint: URL
    try {
      endpoint = new URL(data.trim(), this.#url)
    } catch {
      throw new ProtocolError(`The endpoint event of ${this.#url} is not a URL`)
    }
    // An absolute endpoint elsewhere would send every message (and the upstream's credentials) to another host.
    if (endpoint.origin !== this.#url.origin) throw new ProtocolError(`The endpoint event of ${this.#url} names another origin (${endpoint.origin}); refused`)
    return endpoint
  }

  /** Delivers the stream's messages until it ends; then the session is over. */
  async #follow(events: AsyncGenerator<{ event: string; data: string }>): Promise<void> {
    try {
      for await (const event of events) {
        const message = messageOf(event) // a later endpoint event changes nothing
        if (message === undefined) continue
        if (message instanceof ProtocolError) {
          this.onerror?.(message)
          continue
        }
        if (!('method' in message) && message.id !== null) this.#pending.delete(message.id)
        this.onmessage?.(message)
      }
    } catch (error) {
      if (!this.#closed && error instanceof ProtocolError) this.onerror?.(error)
    }
    this.#shutdown()
  }

  send(message: JsonRpcMessage): Promise<void> {
    const endpoint = this.#endpoint
    if (this.#closed || endpoint === undefined) return Promise.reject(new TransportError('The stream is not open'))
    const requestId = 'method' in message && 'id' in message ? message.id : undefined
    if (requestId !== undefined) {
      const max = this.#options.maxPending ?? DEFAULT_MAX_PENDING
      if (this.#pending.size >= max) return Promise.reject(new TransportError(`${max} requests already await their answer from ${this.#url} (maxPending)`, { requestId, refused: true }))
      this.#pending.add(requestId)
    } else if ('method' in message && message.method === 'notifications/cancelled') {
      this.#pending.delete(message.params?.requestId as RequestId)
    }
    return this.#post(endpoint, message, requestId)
  }

  async #post(endpoint: URL, message: JsonRpcMessage, requestId: RequestId | undefined): Promise<void> {
    const controller = new LightAbort()
    const stop = (): void => controller.abort()
    this.#abort.addEventListener('abort', stop)
    const timeoutMs = this.#options.timeoutMs ?? 30_000
    const timer = timeoutMs === 0 ? undefined : setTimeout(() => controller.abort('timeout'), timeoutMs)
    try {
      const headers = withTraceHeaders({ ...(await this.#headers()), 'content-type': 'application/json' }, message)
      let response: HttpAnswer
      try {
        response = await this.#options.exchange(endpoint, 'POST', headers, JSON.stringify(message), controller)
      } catch (error) {
        if (controller.aborted && !this.#abort.aborted) throw new TimeoutError(`POST ${endpoint.pathname} sent no answer head within ${timeoutMs} ms`, timeoutMs, { requestId })
        throw new TransportError(`POST ${endpoint.pathname} failed: ${detailOf(error)}`, { requestId, cause: error })
      }
      const body = await response.text(POST_ANSWER_BYTES).catch(() => '')
      if (ok(response)) return
      // The server forgot the session (it restarted, or dropped the stream): this transport is done.
      if (response.status === 404) queueMicrotask(() => this.#shutdown())
      throw new TransportError(`POST ${endpoint.pathname} answered HTTP ${response.status}: ${body.slice(0, 200)}`, {
        requestId, status: response.status, refused: true, challenge: response.header('www-authenticate'),
      })
    } catch (error) {
      if (requestId !== undefined) this.#pending.delete(requestId)
      throw error
    } finally {
      clearTimeout(timer)
      this.#abort.removeEventListener('abort', stop)
    }
  }

  async close(): Promise<void> {
    this.#shutdown()
  }

  #shutdown(): void {
    if (this.#closed) return
    this.#closed = true
    this.#abort.abort('closed')
    this.#pending.clear()
    this.onclose?.()
  }

  async #headers(): Promise<Record<string, string>> {
    const authorize = this.#options.authorize
    return { ...this.#options.headers, ...(authorize === undefined ? undefined : await authorize()) }
  }
}

function detailOf(error: unknown): string {
  const { cause, code } = error as { cause?: { code?: string; message?: string }; code?: string }
  return cause?.code ?? cause?.message ?? code ?? (error as Error).message
}
