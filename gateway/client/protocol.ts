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
import { classify, errorMessage, resultMessage, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { CancelledError, ProtocolError, RpcError, TimeoutError, TransportError } from './errors.ts'
import type { Transport } from './transport.ts'
import { DeadlineTimer } from './deadline-timer.ts'
import { SoloMap } from '../wire/solo-map.ts'
import { Pending, reasonOf, type RequestOptions } from './pending-request.ts'

export type { RequestOptions } from './pending-request.ts'

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

function asTransportError(error: unknown, requestId: RequestId): Error {
  if (error instanceof TransportError || error instanceof TimeoutError || error instanceof ProtocolError) return error
  // A refusal of the gateway's own on the way out (an upstream credential that could not be had) stays itself.
  if (error instanceof EdgeError) return error
  return new TransportError(`Could not send the request: ${(error as Error).message}`, { requestId, cause: error })
}
