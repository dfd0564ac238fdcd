/**
 * The Streamable HTTP client transport (MCP 2025-11-25 §Transports), on the global `fetch`, a given
 * one, or node:http with keep-alive Agents (`agents`; http-exchange.ts):
 *
 *   send(request)      POST ─► 200 application/json ─► onmessage(response)
 *                           └► 200 text/event-stream ─► onmessage(each event) … response
 *                                   │ dropped after an event id, no response yet
 *                                   └► wait `retry` ms ─► GET + Last-Event-ID ─► same stream, resumed
 *   send(notification) POST ─► 202
 *   after notifications/initialized: GET ─► standalone stream (server notifications and requests), 405 = none
 *   close()            abort every exchange ─► DELETE (405 is fine)
 *
 * The `mcp-session-id` from the initialize response and the negotiated `mcp-protocol-version` go on
 * every later request. A request's stream is dropped when the client cancels that request.
 */
import type { Agent } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { JsonRpcMessage, RequestId } from '../wire/jsonrpc.ts'
import { agentFetch, connectionAgent } from './connection-options.ts'
import { ProtocolError, TimeoutError, TransportError } from './errors.ts'
import { BodyTooLargeError, type HttpAnswer, type HttpExchange } from './http-answer.ts'
import { fetchExchange, nodeExchange } from './http-exchange.ts'
import { messageOf, readSse } from './sse-parser.ts'
import { DEFAULT_MAX_MESSAGE_BYTES, TransportCallbacks, type Transport } from './transport.ts'
import { ok, statusError } from './http-status.ts'
import { answerAsSent } from './result-text.ts'
import { SoloMap } from '../wire/solo-map.ts'
import type { StreamableHttpOptions } from './streamable-http-options.ts'

export type { StreamableHttpOptions } from './streamable-http-options.ts'
import { LightAbort, realSignal, type AbortLike } from '../wire/abort-like.ts'
import { withTraceHeaders } from './trace-headers.ts'

/** A stream being followed: the request it answers (none for the standalone stream) and where to resume. */
interface Stream {
  requestId?: RequestId
  signal: AbortLike
  lastEventId?: string
  retryMs?: number
}

const TIMEOUT = Symbol('timeout')

export class StreamableHttpTransport extends TransportCallbacks implements Transport {
  readonly #url: URL
  readonly #options: StreamableHttpOptions
  readonly #exchange: HttpExchange
  /** The headers of every POST, made again only when the session id, version or `authorize`'s answer changes. */
  #postHeaders: Record<string, string> | undefined
  /** What `authorize` answered last. */
  #authorized: Readonly<Record<string, string>> | undefined
  /** The Agent behind the exchange when TLS or proxy options were given. */
  readonly #agent: Agent | undefined
  #sessionId: string | undefined
  #protocolVersion: string | undefined
  #closed = false
  /**
   * The exchanges in flight that #requests does not hold (notifications, answers, the standalone
   * stream): close() aborts these and #requests'. A request's exchange is in #requests alone, so a
   * call costs one Map entry, not a Set entry besides (an object's first hashing is not free).
   */
  readonly #live = new Set<LightAbort>()
  /**
   * The exchange of each request in flight, aborted when the client cancels the request (a SoloMap:
   * with one request in flight, its entry comes and goes on every call).
   */
  readonly #requests = new SoloMap<RequestId, LightAbort>()

  constructor(options: StreamableHttpOptions) {
    super()
    this.#options = options
    this.#url = new URL(options.url)
    this.#agent = options.fetch === undefined ? connectionAgent(this.#url, options) : undefined
    this.#exchange = options.fetch !== undefined ? fetchExchange(options.fetch)
      : this.#agent !== undefined ? fetchExchange(agentFetch(this.#agent))
      : options.agents !== undefined ? nodeExchange(options.agents)
      : fetchExchange(fetch)
  }

  get sessionId(): string | undefined {
    return this.#sessionId
  }

  async start(): Promise<void> {
    if (this.#closed) throw new TransportError('The transport is closed')
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version
    this.#postHeaders = undefined
  }

  async resumeSession(sessionId: string | undefined): Promise<void> {
    if (this.#closed) throw new TransportError('The transport is closed')
    this.#setSession(sessionId)
    if (this.#options.standaloneStream !== false) await this.#openStandalone()
  }

  send(message: JsonRpcMessage, resultAsSent = false): Promise<void> {
    if (this.#closed) return Promise.reject(new TransportError('The transport is closed'))
    // A request's POST is all there is to sending it: no async frame around it on every call.
    if ('method' in message && 'id' in message) return this.#post(message, resultAsSent)
    return this.#sendOther(message)
  }

  async #sendOther(message: JsonRpcMessage): Promise<void> {
    await this.#post(message)
    if (!('method' in message)) return
    if (message.method === 'notifications/cancelled') this.#requests.get(message.params?.requestId as RequestId)?.abort()
    // Waiting for the stream's head means nothing the server sends after initialize can be missed.
    if (message.method === 'notifications/initialized' && this.#options.standaloneStream !== false) await this.#openStandalone()
  }

  /**
   * POSTs one message and delivers what answers it: nothing (202), a JSON body, or an SSE stream
   * followed in the background. `resultAsSent`: a JSON answer's result may be delivered unparsed (send).
   */
  async #post(message: JsonRpcMessage, resultAsSent = false): Promise<void> {
    const requestId = 'method' in message && 'id' in message ? message.id : undefined
    // A LightAbort, not an AbortController: made for every request, and almost never fired.
    const controller = this.#track(new LightAbort(), requestId)
    let streaming = false
    try {
      const authorize = this.#options.authorize
      if (authorize !== undefined) {
        // Inline, not #authorize(): a cached credential answers synchronously and costs no async frame.
        const answer = authorize()
        const headers = answer instanceof Promise ? await answer : answer
        if (headers !== this.#authorized) {
          this.#authorized = headers
          this.#postHeaders = undefined
        }
      }
      this.#postHeaders ??= this.#headers(POST_HEADERS)
      const headers = withTraceHeaders(this.#postHeaders, message)
      const body = JSON.stringify(message)
      let response: HttpAnswer
      if (requestId === undefined) response = await this.#request('POST', headers, controller, { body, timeoutMs: this.#timeoutMs })
      else {
        // A request's POST has no timer (its request's timeout ends it): the exchange is awaited here,
        // without #request's async frame around it (a promise and a resumption less per call).
        try {
          response = await this.#exchange(this.#url, 'POST', headers, body, controller)
        } catch (error) {
          throw this.#exchangeError('POST', error, requestId)
        }
      }
      const sessionId = response.header('mcp-session-id')
      if (sessionId !== undefined && sessionId !== this.#sessionId) this.#setSession(sessionId)
      if (response.status === 202) return void (await response.cancel())
      if (!ok(response)) throw await statusError(response, requestId, true)
      const type = response.header('content-type') ?? ''
      if (type.includes('text/event-stream')) {
        streaming = true
        void this.#follow(response, { requestId, signal: controller }).finally(() => this.#untrack(controller, requestId))
      } else if (type.includes('application/json')) {
        // A body that came with its head is read without a promise (HttpAnswer.textNow).
        this.#deliverJson(this.#textNow(response, requestId) ?? (await this.#boundedText(response, requestId)), requestId, resultAsSent)
      } else {
        await response.cancel()
        throw new TransportError(`POST answered ${response.status} with an unexpected content type "${type}"`, { requestId, status: response.status })
      }
    } catch (error) {
      if (controller.aborted && !(error instanceof TimeoutError)) return // cancelled or closed: nothing to report
      throw error
    } finally {
      if (!streaming) this.#untrack(controller, requestId)
    }
  }

  /** Asks `authorize` for this exchange's headers; a new answer rebuilds the POST headers. */
  async #authorize(): Promise<void> {
    const answer = this.#options.authorize!()
    const headers = answer instanceof Promise ? await answer : answer
    if (headers === this.#authorized) return
    this.#authorized = headers
    this.#postHeaders = undefined
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (this.#sessionId !== undefined && this.#options.endSessionOnClose !== false) {
      try {
        if (this.#options.authorize !== undefined) await this.#authorize()
        const response = await this.#request('DELETE', this.#headers({}), new AbortController().signal, { timeoutMs: this.#timeoutMs })
        await response.cancel()
      } catch {
        // The session ends on its own when the server is gone or refuses DELETE.
      }
    }
    for (const controller of this.#live) controller.abort()
    for (const controller of this.#requests.values()) controller.abort()
    this.#live.clear()
    this.#requests.clear()
    this.#agent?.destroy()
    this.onclose?.()
  }

  get #timeoutMs(): number | undefined {
    const timeoutMs = this.#options.timeoutMs ?? 30_000
    return timeoutMs === 0 ? undefined : timeoutMs
  }

  #track(controller: LightAbort, requestId: RequestId | undefined): LightAbort {
    if (requestId === undefined) {
      this.#live.add(controller)
      return controller
    }
    // The same id sent again (not by McpClient) takes the id; the earlier exchange is still closed by close().
    const earlier = this.#requests.get(requestId)
    if (earlier !== undefined) this.#live.add(earlier)
    this.#requests.set(requestId, controller)
    return controller
  }

  #untrack(controller: LightAbort, requestId: RequestId | undefined): void {
    if (requestId !== undefined && this.#requests.get(requestId) === controller) this.#requests.delete(requestId)
    else this.#live.delete(controller)
  }

  /** The body as text, refused (and the connection dropped) past maxMessageBytes. */
  async #boundedText(response: HttpAnswer, requestId: RequestId | undefined): Promise<string> {
    const limit = this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    try {
      return await response.text(limit)
    } catch (error) {
      throw bodyError(error, limit, requestId)
    }
  }

  /** #boundedText's answer when the whole body is there already; undefined when it is not (or the wire cannot tell). */
  #textNow(response: HttpAnswer, requestId: RequestId | undefined): string | undefined {
    if (response.textNow === undefined) return undefined
    const limit = this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    try {
      return response.textNow(limit)
    } catch (error) {
      throw bodyError(error, limit, requestId)
    }
  }

  #setSession(sessionId: string | undefined): void {
    this.#sessionId = sessionId
    this.#postHeaders = undefined
  }

  #deliverJson(text: string, requestId: RequestId | undefined, resultAsSent: boolean): void {
    // The usual answer to a caller that passes its result on unread: checked, not parsed (result-text.ts).
    const passed = resultAsSent && requestId !== undefined ? answerAsSent(text, requestId) : undefined
    if (passed !== undefined) return this.onmessage?.(passed, requestId)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new ProtocolError(`The server answered with invalid JSON: ${text.slice(0, 200)}`, { requestId })
    }
    // One message (the usual answer) is delivered without an array made around it.
    if (!Array.isArray(body)) return this.onmessage?.(body as JsonRpcMessage, requestId)
    for (const message of body) this.onmessage?.(message as JsonRpcMessage, requestId)
  }

  /** Reads an SSE stream to its end, resuming it with GET + Last-Event-ID while it may still carry an answer. */
  async #follow(first: HttpAnswer, stream: Stream): Promise<void> {
    let response: HttpAnswer | undefined = first
    let failures = 0
    for (;;) {
      let answered = false
      if (response !== undefined) {
        const read = await this.#read(response, stream)
        answered = read.answered
        if (read.events > 0) failures = 0
      }
      if (this.#closed || stream.signal.aborted || answered) return
      if (stream.requestId !== undefined && stream.lastEventId === undefined) {
        return this.#lost(stream, 'the stream ended before the response and carried no event id to resume from')
      }
      if (++failures > (this.#options.maxReconnects ?? 3)) return this.#lost(stream, `${failures - 1} reconnections in a row failed`)
      try {
        await sleep(stream.retryMs ?? this.#options.reconnectDelayMs ?? 1000, undefined, { signal: realSignal(stream.signal) })
      } catch {
        return // closed or cancelled while waiting
      }
      response = undefined
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' }
        if (stream.lastEventId !== undefined) headers['last-event-id'] = stream.lastEventId
        if (this.#options.authorize !== undefined) await this.#authorize()
        const resumed = await this.#request('GET', this.#headers(headers), stream.signal, { timeoutMs: this.#timeoutMs, requestId: stream.requestId })
        if (ok(resumed)) response = resumed
        else if (resumed.status === 404 || resumed.status === 405) return this.#lost(stream, (await statusError(resumed, stream.requestId)).message, resumed.status)
        else await resumed.cancel()
      } catch {
        if (this.#closed || stream.signal.aborted) return
      }
    }
  }

  /** Delivers the events of one connection; `answered` once it carried the answer to the stream's request. */
  async #read(response: HttpAnswer, stream: Stream): Promise<{ answered: boolean; events: number }> {
    let answered = false
    let events = 0
    try {
      for await (const event of readSse(response.chunks(), this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES)) {
        events++
        if (event.id !== undefined) stream.lastEventId = event.id
        if (event.retry !== undefined) stream.retryMs = event.retry
        const message = messageOf(event)
        if (message === undefined) continue
        if (message instanceof ProtocolError) {
          this.onerror?.(message)
          continue
        }
        if (stream.requestId !== undefined && !('method' in message) && message.id === stream.requestId) answered = true
        this.onmessage?.(message, stream.requestId)
      }
    } catch (error) {
      if (error instanceof ProtocolError) this.onerror?.(new ProtocolError(error.message, { requestId: stream.requestId }))
      // A dropped connection ends the loop like a clean end; #follow decides whether to resume.
    }
    return { answered, events }
  }

  #lost(stream: Stream, reason: string, status?: number): void {
    if (this.#closed || stream.signal.aborted) return
    const what = stream.requestId === undefined ? 'The standalone stream' : `The stream of request ${stream.requestId}`
    this.onerror?.(new TransportError(`${what} was lost: ${reason}`, { requestId: stream.requestId, status }))
  }

  /** Opens the standalone GET stream; resolves once it is open (or refused), then follows it in the background. */
  async #openStandalone(): Promise<void> {
    const controller = this.#track(new LightAbort(), undefined)
    const report = (error: unknown): void => {
      this.#untrack(controller, undefined)
      if (!this.#closed && !controller.aborted) this.onerror?.(error as Error)
    }
    let response: HttpAnswer
    try {
      if (this.#options.authorize !== undefined) await this.#authorize()
      response = await this.#request('GET', this.#headers(SSE_HEADERS), controller, { timeoutMs: this.#timeoutMs })
      if (response.status === 405) {
        this.#untrack(controller, undefined)
        return void (await response.cancel()) // the server offers no standalone stream
      }
      if (!ok(response)) throw await statusError(response, undefined)
    } catch (error) {
      return report(error)
    }
    void this.#follow(response, { signal: controller }).then(() => this.#untrack(controller, undefined), report)
  }

  /** One HTTP exchange up to its response head (`headers` complete); `timeoutMs` bounds the wait for the head only. */
  async #request(
    method: string,
    headers: Readonly<Record<string, string>>,
    signal: AbortLike,
    options: { body?: string; timeoutMs?: number | undefined; requestId?: RequestId | undefined },
  ): Promise<HttpAnswer> {
    const { timeoutMs, requestId } = options
    // A request's POST has no timer of its own (its request's timeout ends it): no timer, no
    // combined signal, which cost more than the rest of the exchange's bookkeeping.
    const timer = timeoutMs === undefined ? undefined : new AbortController()
    const timeout = timer === undefined ? undefined : setTimeout(() => timer.abort(TIMEOUT), timeoutMs)
    const combined = timer === undefined ? signal : AbortSignal.any([realSignal(signal), timer.signal])
    try {
      return await this.#exchange(this.#url, method, headers, options.body, combined)
    } catch (error) {
      if (timer?.signal.aborted === true) throw new TimeoutError(`${method} ${this.#url} sent no response head within ${timeoutMs} ms`, timeoutMs!, { requestId })
      throw this.#exchangeError(method, error, requestId)
    } finally {
      clearTimeout(timeout)
    }
  }

  /** An exchange's failure as the TransportError a caller gets. */
  #exchangeError(method: string, error: unknown, requestId: RequestId | undefined): TransportError {
    // fetch wraps the socket's error as its cause; node:http throws it as it is.
    const { cause, code } = error as { cause?: { code?: string; message?: string }; code?: string }
    const detail = cause?.code ?? cause?.message ?? (code !== undefined && code !== 'ABORT_ERR' ? code : (error as Error).message)
    return new TransportError(`${method} ${this.#url} failed: ${detail}`, { requestId, cause: error })
  }

  #headers(extra: Readonly<Record<string, string>>): Record<string, string> {
    const headers: Record<string, string> = { ...this.#options.headers, ...this.#authorized, ...extra }
    if (this.#options.authorization !== undefined) headers.authorization = this.#options.authorization
    if (this.#sessionId !== undefined) headers['mcp-session-id'] = this.#sessionId
    if (this.#protocolVersion !== undefined) headers['mcp-protocol-version'] = this.#protocolVersion
    return headers
  }
}

/** A body's read failure as the transport reports it: over `limit`, or cut off. */
function bodyError(error: unknown, limit: number, requestId: RequestId | undefined): Error {
  if (error instanceof BodyTooLargeError) return new ProtocolError(`The server's answer is larger than ${limit} bytes`, { requestId })
  return new TransportError(`The answer to request ${String(requestId)} was cut off: ${(error as Error).message}`, { requestId, cause: error })
}

const POST_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }
const SSE_HEADERS = { accept: 'text/event-stream' }
