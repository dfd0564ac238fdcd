/**
 * JSON-RPC over a client transport: id correlation, per-request timeouts, progress tokens whose
 * callback may cancel, cancellation by AbortSignal, and the server's own requests dispatched to
 * handlers (answered with their result, or with the error they throw).
 *
 *   request() ── id, timer, progressToken ──► transport.send
 *       ▲                                          │
 *       └── result / RpcError / TimeoutError ◄─────┤ onmessage: response → pending[id]
 *                                                  │            progress → pending[token].onProgress (false → cancel)
 *                                                  │            request  → handler → response
 *                                                  │            notification → handler
 */
import { EdgeError, McpError, RpcCode } from '../wire/errors.ts'
import type { ClientRequestOptions } from '../registry/context.ts'
import { classify, errorMessage, resultMessage, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { CancelledError, ProtocolError, RpcError, TimeoutError, TransportError } from './errors.ts'
import type { Transport } from './transport.ts'
import type { AbortLike } from '../wire/abort-like.ts'
import { DeadlineTimer } from './deadline-timer.ts'
import { SoloMap } from '../wire/solo-map.ts'

/**
 * Per-request options: `timeoutMs` (the client's default otherwise; 0: none), `onProgress` (called on each
 * progress notification; return `false` to cancel the request), `signal` (aborting cancels it).
 */
export type RequestOptions = ClientRequestOptions & {
  /** An AbortSignal, or the gateway's cheaper LightAbort (a downstream request's cancellation). */
  signal?: AbortLike
  /**
   * Opaque, handed back as `related` to the handlers of what the server sends on this request's own
   * stream (a request or notification on its SSE stream), so a proxy knows which request it belongs to.
   */
  context?: unknown
  /**
   * True: the result may come back as a VerbatimResult (wire/message-text.ts): its text checked as
   * one JSON object but not parsed (client/result-text.ts), with no members to read, so that an
   * answer made of it carries the server's bytes. Only for a caller that passes the result on unread;
   * a result whose `isError` is true, or any answer the check does not read, comes parsed as usual.
   */
  resultAsSent?: boolean
  /**
   * Each progress notification of this request restarts its timeout, up to `maxTotalTimeoutMs` from
   * when it was sent (Infinity when absent): a long call that says it is working is not cut at the
   * first timeout, and one that never ends still is (the spec's maximum).
   */
  resetTimeoutOnProgress?: boolean
  maxTotalTimeoutMs?: number
}

/** What a handler of a server→client request receives besides its params. */
export interface IncomingRequestExtra {
  requestId: RequestId
  /** Aborted when the server cancels its request; the answer is then not sent. */
  signal: AbortSignal
  /** The `context` of the client request whose stream carried this one, when the transport can tell. */
  related?: unknown
  /**
   * Reports progress on the server's request (`notifications/progress` with its `progressToken`);
   * false, and nothing sent, when the server asked for none or the request was cancelled.
   */
  progress(progress: number, total?: number, message?: string): boolean
}

export type RequestHandler = (params: JsonObject, extra: IncomingRequestExtra) => JsonObject | Promise<JsonObject>
/** `related` is the `context` of the client request whose stream carried the notification, when known. */
export type NotificationHandler = (params: JsonObject, related?: unknown) => void

export class Protocol {
  readonly transport: Transport
  /** Errors that end no request: a malformed server message, a lost standalone stream, a throwing handler. */
  onerror?: (error: Error) => void
  /** Called once when the transport is gone. */
  onclose?: () => void

  readonly #timeoutMs: number
  #nextId = 0
  #closed = false
  /** A SoloMap: with one request in flight, its entry comes and goes on every call. */
  readonly #pending = new SoloMap<RequestId, Pending>()
  readonly #incoming = new Map<RequestId, AbortController>()
  readonly #requestHandlers = new Map<string, RequestHandler>()
  readonly #notificationHandlers = new Map<string, NotificationHandler>()
  /** The server's requests being answered, and handlers' promises: what waitBackgroundTasks waits for. */
  readonly #background = new Set<Promise<unknown>>()
  /** The pending requests' deadlines, on one timer. */
  readonly #deadlines = new DeadlineTimer((now) => this.#expire(now))

  constructor(transport: Transport, defaultTimeoutMs: number) {
    this.transport = transport
    this.#timeoutMs = defaultTimeoutMs
    transport.onmessage = (message, relatedId) => this.#receive(message, relatedId)
    transport.onerror = (error) => this.#transportError(error)
    transport.onclose = () => this.#transportClosed()
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Sends a request and resolves with its result; rejects with RpcError, TimeoutError, CancelledError or TransportError. */
  request(method: string, params?: JsonObject, options: RequestOptions = {}): Promise<JsonObject> {
    if (this.#closed) return Promise.reject(new TransportError('The client is closed'))
    const { signal, onProgress } = options
    if (signal?.aborted) return Promise.reject(new CancelledError(reasonOf(signal.reason)))
    const id = ++this.#nextId
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs
    let body = params
    if (onProgress !== undefined) body = { ...params, _meta: { ...(params?._meta as JsonObject | undefined), progressToken: id } }
    const message: JsonRpcRequest = body === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: body }
    return new Promise<JsonObject>((resolve, reject) => {
      const pending = new Pending(this, id, method, timeoutMs, options, resolve, reject)
      this.#pending.set(id, pending)
      this.#deadlines.schedule(pending.deadline)
      this.transport.send(message, options.resultAsSent).catch((error: unknown) => pending.finish(asTransportError(error, id)))
    })
  }

  /** Forgets request `id` (its Pending settles it); false when it had already ended. */
  forget(id: RequestId): boolean {
    if (!this.#pending.delete(id)) return false
    if (this.#pending.size === 0) this.#deadlines.release()
    return true
  }

  /** Ends the requests past their deadline; the earliest deadline left. */
  #expire(now: number): number {
    let next = Infinity
    for (const pending of this.#pending.values()) {
      if (pending.deadline <= now) pending.timedOut()
      else if (pending.deadline < next) next = pending.deadline
    }
    return next
  }

  /** Tells the server that request `id` is cancelled (nothing when the client is closed). */
  sendCancelled(requestId: RequestId, reason: string): void {
    if (this.#closed) return
    this.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } }).catch(() => undefined)
  }

  /** Sends a notification; rejects when the transport could not deliver it. */
  async notify(method: string, params?: JsonObject): Promise<void> {
    if (this.#closed) throw new TransportError('The client is closed')
    await this.transport.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params })
  }

  /** Answers the server's `method` requests with `handler`; methods without a handler get -32601. */
  setRequestHandler(method: string, handler: RequestHandler): void {
    this.#requestHandlers.set(method, handler)
  }

  setNotificationHandler(method: string, handler: NotificationHandler): void {
    this.#notificationHandlers.set(method, handler)
  }

  /** Closes the transport; pending requests reject with TransportError. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    try {
      await this.transport.close()
    } finally {
      this.#transportClosed()
    }
  }

  #receive(raw: JsonRpcMessage, relatedId?: RequestId): void {
    let incoming
    try {
      incoming = classify(raw)
    } catch (error) {
      const body = raw as { id?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } }
      if (body.id === null && typeof body.error?.code === 'number') {
        this.onerror?.(new RpcError(body.error.code, String(body.error.message), body.error.data))
      } else {
        this.onerror?.(new ProtocolError(`The server sent an invalid message: ${(error as Error).message}`))
      }
      return
    }
    switch (incoming.kind) {
      case 'response': {
        const message = incoming.message
        const id = message.id as RequestId // classify() refuses a response without one
        const pending = this.#pending.get(id)
        if (pending === undefined) return // answered after a timeout or a cancellation
        if ('error' in message) pending.finish(new RpcError(message.error.code, message.error.message, message.error.data))
        else if (typeof message.result === 'object' && message.result !== null) pending.finish(undefined, message.result)
        else pending.finish(new ProtocolError('The server answered with a result that is not an object', { requestId: id }))
        return
      }
      case 'notification':
        return this.#notification(incoming.message.method, incoming.message.params ?? {}, this.#related(relatedId))
      case 'request':
        this.#track(this.#serve(incoming.message, this.#related(relatedId)))
    }
  }

  #related(relatedId: RequestId | undefined): unknown {
    return relatedId === undefined ? undefined : this.#pending.get(relatedId)?.context
  }

  #notification(method: string, params: JsonObject, related: unknown): void {
    if (method === 'notifications/progress') return this.#progress(params)
    if (method === 'notifications/cancelled') {
      this.#incoming.get(params.requestId as RequestId)?.abort(params.reason)
      return
    }
    const handler = this.#notificationHandlers.get(method)
    if (handler === undefined) return
    try {
      const returned: unknown = handler(params, related)
      if (returned instanceof Promise) this.#track(returned.catch((error: unknown) => this.onerror?.(error as Error)))
    } catch (error) {
      this.onerror?.(error as Error)
    }
  }

  #track(task: Promise<unknown>): void {
    this.#background.add(task)
    void task.finally(() => this.#background.delete(task))
  }

  /**
   * Resolves `true` once the server's requests being answered and the handlers' promises have
   * settled (those that start meanwhile too), `false` when `timeoutMs` passed first.
   */
  async settled(timeoutMs?: number): Promise<boolean> {
    const all = (async () => {
      while (this.#background.size > 0) await Promise.allSettled([...this.#background])
      return true
    })()
    if (timeoutMs === undefined || timeoutMs === 0) return all
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))
    try {
      return await Promise.race([all, late])
    } finally {
      clearTimeout(timer)
    }
  }

  #progress(params: JsonObject): void {
    const pending = this.#pending.get(params.progressToken as RequestId)
    if (pending?.onProgress === undefined || typeof params.progress !== 'number') return
    pending.progressed()
    let verdict: boolean | void
    try {
      verdict = pending.onProgress(params.progress, params.total as number | undefined, params.message as string | undefined)
    } catch (error) {
      pending.cancel(`the progress callback threw: ${(error as Error).message}`)
      return
    }
    if (verdict === false) pending.cancel('cancelled by the progress callback')
  }

  async #serve(request: JsonRpcRequest, related: unknown): Promise<void> {
    const { id, method } = request
    const handler = this.#requestHandlers.get(method)
    if (handler === undefined) return this.#answer(errorMessage(id, RpcCode.MethodNotFound, `Method not found: ${method}`))
    const controller = new AbortController()
    this.#incoming.set(id, controller)
    const token = (request.params?._meta as JsonObject | undefined)?.progressToken
    const progress = (value: number, total?: number, message?: string): boolean => {
      if ((typeof token !== 'string' && typeof token !== 'number') || controller.signal.aborted || this.#closed) return false
      const params: JsonObject = { progressToken: token, progress: value }
      if (total !== undefined) params.total = total
      if (message !== undefined) params.message = message
      this.transport.send({ jsonrpc: '2.0', method: 'notifications/progress', params }).catch((error: unknown) => this.onerror?.(error as Error))
      return true
    }
    try {
      const result = await handler(request.params ?? {}, { requestId: id, signal: controller.signal, related, progress })
      if (!controller.signal.aborted) this.#answer(resultMessage(id, result))
    } catch (error) {
      if (controller.signal.aborted) return
      const code = error instanceof McpError ? error.code : RpcCode.InternalError
      const data = error instanceof McpError ? error.data : undefined
      this.#answer(errorMessage(id, code, (error as Error).message, data))
    } finally {
      this.#incoming.delete(id)
    }
  }

  #answer(message: JsonRpcMessage): void {
    if (this.#closed) return
    this.transport.send(message).catch((error: unknown) => this.onerror?.(error as Error))
  }

  #transportError(error: Error): void {
    const requestId = (error as { requestId?: RequestId }).requestId
    const pending = requestId === undefined ? undefined : this.#pending.get(requestId)
    if (pending !== undefined) pending.finish(error)
    else this.onerror?.(error)
  }

  #transportClosed(): void {
    this.#closed = true
    this.#deadlines.stop()
    for (const [id, pending] of this.#pending) pending.finish(new TransportError('The connection closed before the answer came', { requestId: id }))
    for (const controller of this.#incoming.values()) controller.abort('connection closed')
    this.#incoming.clear()
    const onclose = this.onclose
    this.onclose = undefined
    onclose?.()
  }
}

/**
 * One request awaiting its answer: settles its promise once (answer, error, timeout, cancellation),
 * then forgets its abort listener. One object with methods rather than a closure per
 * step, since every request made them all and most requests only ever use `finish`.
 */
class Pending {
  readonly onProgress: ClientRequestOptions['onProgress']
  /** The caller's `context` (a proxy's: the downstream request's ctx), until the request ends. */
  context: unknown
  readonly #protocol: Protocol
  readonly #id: RequestId
  readonly #method: string
  #signal: AbortLike | undefined
  readonly #resolve: (result: JsonObject) => void
  readonly #reject: (error: Error) => void
  /**
   * When the request times out (performance.now()); Infinity: never. The protocol's one timer watches
   * it: a deadline moved later (progress) is found when the timer fires at the old one, and set again.
   */
  deadline: number
  readonly #timeoutMs: number
  /** The latest the deadline may move to on progress; undefined: progress does not move it. */
  readonly #latest: number | undefined
  readonly #maxTotalMs: number
  #onAbort: (() => void) | undefined

  constructor(protocol: Protocol, id: RequestId, method: string, timeoutMs: number, options: RequestOptions, resolve: (result: JsonObject) => void, reject: (error: Error) => void) {
    this.#protocol = protocol
    this.#id = id
    this.#method = method
    this.onProgress = options.onProgress
    this.context = options.context
    this.#resolve = resolve
    this.#reject = reject
    this.#signal = options.signal
    // 0 means no timeout, as in lua-resty-mcp.
    this.#timeoutMs = timeoutMs
    const now = performance.now()
    this.deadline = timeoutMs === 0 ? Infinity : now + timeoutMs
    this.#maxTotalMs = options.maxTotalTimeoutMs ?? Infinity
    this.#latest = options.resetTimeoutOnProgress === true && timeoutMs !== 0 ? now + this.#maxTotalMs : undefined
    const signal = options.signal
    if (signal !== undefined) {
      this.#onAbort = () => this.cancel(reasonOf(signal.reason))
      signal.addEventListener('abort', this.#onAbort, { once: true })
    }
  }

  finish(error: Error | undefined, result?: JsonObject): void {
    if (!this.#protocol.forget(this.#id)) return
    this.#letGo()
    if (error === undefined) this.#resolve(result!)
    else this.#reject(error)
  }

  /** Ends the request with CancelledError and tells the server, unless it already ended. */
  cancel(reason: string): void {
    if (!this.#protocol.forget(this.#id)) return
    this.#tellServer(reason)
    // Forgotten already: finish() would do nothing, so settle here.
    this.#letGo()
    this.#reject(new CancelledError(reason, { requestId: this.#id }))
  }

  /** The server reported progress: with resetTimeoutOnProgress, the timeout starts again (within the latest). */
  progressed(): void {
    if (this.#latest !== undefined) this.deadline = Math.min(performance.now() + this.#timeoutMs, this.#latest)
  }

  /** The request's deadline passed: ends it with TimeoutError and tells the server. */
  timedOut(): void {
    // Progress kept it going up to the most it may take: that is the time it had.
    const timeoutMs = this.#latest !== undefined && this.deadline >= this.#latest ? this.#maxTotalMs : this.#timeoutMs
    if (!this.#protocol.forget(this.#id)) return
    this.#tellServer(`timed out after ${timeoutMs} ms`)
    this.#letGo()
    this.#reject(new TimeoutError(`${this.#method} got no answer within ${timeoutMs} ms`, timeoutMs, { requestId: this.#id }))
  }

  /**
   * The request has ended: its abort listener goes, and so do its references to the caller's context
   * and signal. A proxied call's context is the downstream request (its ctx, response, socket state),
   * and an ended Pending that still held it kept that whole request alive through young-generation
   * collections: P promoted ~2.7 KB a call to the old generation (U, serving the call itself, none),
   * and its scavenges paused it ~6x as long (--trace-gc-nvp, bench/README.md "Where the p99 comes from").
   */
  #letGo(): void {
    if (this.#onAbort !== undefined) this.#signal!.removeEventListener('abort', this.#onAbort)
    this.#onAbort = undefined
    this.#signal = undefined
    this.context = undefined
  }

  // initialize must not be cancelled (MCP lifecycle); it just fails.
  #tellServer(reason: string): void {
    if (this.#method !== 'initialize') this.#protocol.sendCancelled(this.#id, reason)
  }
}

function reasonOf(reason: unknown): string {
  if (reason instanceof Error) return reason.message
  return reason === undefined ? 'aborted' : String(reason)
}

function asTransportError(error: unknown, requestId: RequestId): Error {
  if (error instanceof TransportError || error instanceof TimeoutError || error instanceof ProtocolError) return error
  // A refusal of the gateway's own on the way out (an upstream credential that could not be had) stays itself.
  if (error instanceof EdgeError) return error
  return new TransportError(`Could not send the request: ${(error as Error).message}`, { requestId, cause: error })
}
