/**
 * One stateful MCP session over a message channel that carries whole JSON-RPC messages both ways
 * (a WebSocket connection, a stdio process). The channel owns framing; this owns what a message
 * means: the first request must be `initialize`; after it the channel is the session's outlet,
 * every request gets a sink that writes on the channel, and the session ends with the channel.
 *
 *   text ─► depth, JSON (json-text.ts: -32600, -32700) ─► JSON-RPC shape (-32600) ─► queue (arrival order)
 *     ─► limits (channel-limits.ts, when the route has any): a request over them is answered there
 *     ─► no session yet: initialize, or -32600 for any other request
 *     ─► session: request │ notification │ response ─► McpEndpoint ─► sink / outlet ─► channel.send
 *
 * The session lives as long as the channel: it is touched often enough that idle expiry never ends
 * it while the channel is open.
 *
 * Messages are dispatched in arrival order (a notification sent after a request is seen after it),
 * but requests run concurrently: the queue waits for a request's start, never for its end.
 */
import { refusedCall } from '../events/refused-call.ts'
import type { Logger } from 'pino'
import type { Caller } from '../wire/caller.ts'
import { EdgeCode, EdgeError, McpError, RpcCode } from '../wire/errors.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, RequestId } from '../wire/jsonrpc.ts'
import { classify, errorMessage, idOf } from '../wire/jsonrpc.ts'
import { messageText } from '../wire/message-text.ts'
import type { RequestSink, SessionOutlet } from '../protocol/sink.ts'
import { isStatelessMethod, type StatelessSink } from '../protocol/stateless/dispatch.ts'
import { META_VERSION, readEnvelope } from '../protocol/stateless/envelope.ts'
import type { ChannelLimits } from './channel-limits.ts'
import { parseMessageText, type UnparsedMessageError } from './json-text.ts'
import { findSession, openSession, serveSession, wayOf } from './session-door.ts'

/** What a session needs from its channel. */
export interface MessageChannel {
  /** Writes one serialised message; false when the channel is closed (or just closed itself). */
  send(text: string): boolean
  /** Closes the channel because the session ended elsewhere (deleted, expired). */
  close(reason: string): void
}

export class MessageSession {
  readonly #endpoint: McpEndpoint
  readonly #channel: MessageChannel
  readonly #inflight = new Set<Promise<void>>()
  /** Stateless requests in flight, by id: what notifications/cancelled (or the channel ending) calls. */
  readonly #statelessInflight = new Map<RequestId, () => void>()
  #logger: Logger
  #sessionId: string | undefined
  #statelessSeen = false
  #queue: Promise<void> = Promise.resolve()
  #ended = false
  #ending: Promise<void> | undefined
  #keepAlive: NodeJS.Timeout | undefined
  /** When set, server→client requests fail at once: the client can no longer answer them. */
  #unanswerable: string | undefined
  readonly #outlet: SessionOutlet = {
    send: (message) => void this.send(message),
    sendLogged: (data) => void this.#channel.send(data),
    close: () => this.#channel.close('session ended'),
  }

  /** Who is on the other end: learnt once, when the channel opened (a WebSocket upgrade; stdio's local user). */
  readonly #caller: Caller
  /** The route's rate limits and quotas; undefined when it has none (or the channel is the local user's stdio). */
  readonly #limits: ChannelLimits | undefined

  constructor(endpoint: McpEndpoint, channel: MessageChannel, logger: Logger, caller: Caller, limits?: ChannelLimits) {
    this.#endpoint = endpoint
    this.#channel = channel
    this.#logger = caller.principal === undefined ? logger : logger.child({ principal: caller.principal })
    this.#caller = caller
    this.#limits = limits
  }

  get logger(): Logger {
    return this.#logger
  }

  /** True once the client has initialized a session or sent a 2026-07-28 request: it is using the channel. */
  get opened(): boolean {
    return this.#sessionId !== undefined || this.#statelessSeen
  }

  /** Takes one message as received; never throws, answers bad input with a JSON-RPC error. */
  receive(text: string): void {
    this.#queue = this.#queue.then(() => this.#receive(text)).catch((error: unknown) => {
      this.#logger.error({ err: error }, 'message handling failed')
    })
  }

  /** Sends a message on the channel, failing at once a server→client request nobody can answer. */
  send(message: JsonRpcMessage): boolean {
    if (this.#unanswerable !== undefined && 'method' in message && 'id' in message) {
      const reason = this.#unanswerable
      queueMicrotask(() => this.#failClientRequest(message.id, reason))
      return false
    }
    return this.#channel.send(messageText(message))
  }

  /**
   * The client can still read but no longer write (stdin ended): its answers will never come, so the
   * server→client requests waiting now and any sent later fail with `reason`.
   */
  async stopListening(reason: string): Promise<void> {
    await this.#queue
    this.#unanswerable = reason
    const id = this.#sessionId
    const awaiting = id === undefined ? undefined : this.#endpoint.live.get(id)?.awaiting
    for (const requestId of [...(awaiting?.keys() ?? [])]) this.#failClientRequest(requestId, reason)
  }

  /** Resolves once every request received so far has settled. */
  async settled(): Promise<void> {
    await this.#queue
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
  }

  /** Ends the session (once; later calls return the same promise): requests in flight see their signal fire. */
  end(): Promise<void> {
    return (this.#ending ??= this.#end())
  }

  async #end(): Promise<void> {
    this.#ended = true
    clearInterval(this.#keepAlive)
    for (const cancel of this.#statelessInflight.values()) cancel()
    const id = this.#sessionId
    if (id === undefined) return
    try {
      this.#endpoint.closeOutlet(id, this.#outlet)
      await this.#endpoint.deleteSession(id)
    } catch (error) {
      this.#logger.warn({ err: error }, 'cannot delete the session')
    }
  }

  #failClientRequest(requestId: RequestId, reason: string): void {
    const id = this.#sessionId
    if (id === undefined) return
    this.#endpoint.live.get(id)?.awaiting.get(String(requestId))?.reject(new EdgeError('MCP_EDGE_REQUEST_CANCELLED', reason))
  }

  async #receive(text: string): Promise<void> {
    if (this.#ended) return
    let body: unknown
    try {
      body = parseMessageText(text, this.#endpoint.route.limits)
    } catch (error) {
      const refused = error as UnparsedMessageError
      this.send(errorMessage(refused.id, refused.code, refused.message))
      return
    }
    let incoming
    try {
      incoming = classify(body)
    } catch (error) {
      const rpc = error as McpError
      this.send(errorMessage(idOf(body), rpc.code, rpc.message))
      return
    }
    const sessionId = this.#sessionId
    const way = wayOf(incoming, body, sessionId !== undefined)
    if (way === 'stateless' && incoming.kind === 'request') return this.#stateless(incoming.message)
    if (sessionId === undefined) {
      if (incoming.kind === 'notification' && incoming.message.method === 'notifications/cancelled') this.#cancelStateless(incoming.message.params)
      else if (way === 'initialize') {
        // Counted by the transport's rate rules as on HTTP; it holds no session slot (there is no session yet).
        if ((await this.#admit(incoming.message as JsonRpcRequest, undefined)) !== undefined) await this.#initialize(incoming.message as JsonRpcRequest)
      }
      else if (incoming.kind === 'request') this.send(errorMessage(incoming.message.id, RpcCode.InvalidRequest, 'Invalid Request: the first request must be initialize'))
      else this.#logger.debug({ kind: incoming.kind }, 'message before initialize ignored')
      return
    }
    if (way === 'initialize') {
      this.send(errorMessage((incoming.message as JsonRpcRequest).id, RpcCode.InvalidRequest, 'Invalid Request: this session is already initialized'))
      return
    }
    const endpoint = this.#endpoint
    let record
    try {
      record = await findSession(endpoint.store, endpoint.route.location, sessionId)
    } catch (error) {
      this.#logger.warn({ err: error }, 'session store unavailable')
      if (incoming.kind === 'request') this.send(storeUnavailable(incoming.message.id))
      return
    }
    if (record === undefined) {
      this.#channel.close('session ended')
      return
    }
    endpoint.store.touch(record.id)
    if (incoming.kind !== 'request') {
      await serveSession(endpoint, record, incoming, (request) => new ChannelSink(this, request), this.#caller)
      return
    }
    const admission = await this.#admit(incoming.message, record.id)
    if (admission === undefined) return
    this.#track(serveSession(endpoint, record, incoming, (request) => new ChannelSink(this, request), this.#caller), incoming.message, admission.release)
  }

  /** The limits' word on a request: undefined when refused (the refusal is sent), else how to give its slot back. */
  async #admit(request: JsonRpcRequest, sessionId: string | undefined): Promise<{ release: (() => void) | undefined } | undefined> {
    if (this.#limits === undefined) return { release: undefined }
    let admission
    try {
      admission = await this.#limits.admit(request, sessionId)
    } catch (error) {
      this.#logger.warn({ err: error }, 'limiter unavailable')
      this.send(storeUnavailable(request.id))
      return undefined
    }
    if (admission.answer === undefined) return admission
    const answer = admission.answer
    refusedCall(this.#endpoint.calls, request.method, request.params, sessionId, this.#caller, admission.decision, 'error' in answer ? answer.error.message : 'over a tool\'s rate limit', !('error' in answer))
    this.send(answer)
    return undefined
  }

  /**
   * A 2026-07-28 request (its `_meta` envelope names the version; there are no HTTP headers to check it
   * against). Served without a session, like on HTTP; `notifications/cancelled` cancels it, as the
   * stdio transport of that revision says.
   */
  async #stateless(request: JsonRpcRequest): Promise<void> {
    this.#statelessSeen = true
    const endpoint = this.#endpoint
    const meta = request.params?._meta as Record<string, unknown> | undefined
    const version = meta?.[META_VERSION]
    let envelope
    try {
      envelope = readEnvelope(request.params, typeof version === 'string' ? version : undefined)
    } catch (error) {
      const refusal = error as EdgeError
      this.send(errorMessage(request.id, refusal.rpcCode, refusal.message, refusal.data))
      return
    }
    if (!isStatelessMethod(endpoint, request.method)) {
      this.send(errorMessage(request.id, RpcCode.MethodNotFound, `Method not found: ${request.method} (not served on the 2026-07-28 wire)`))
      return
    }
    const admission = await this.#admit(request, undefined)
    if (admission === undefined) return
    const sink = new StatelessChannelSink(this, request, this.#statelessInflight)
    this.#track(endpoint.stateless.handle(request, envelope, sink, this.#caller), request, admission.release)
  }

  /**
   * Keeps an asynchronous request in the in-flight set until it settles (a synchronous one is done);
   * `release` (its session slot) is called once it has.
   */
  #track(running: Promise<void> | undefined, request: JsonRpcRequest, release?: () => void): void {
    if (running === undefined) {
      release?.()
      return
    }
    const settled = running.catch((error: unknown) => {
      this.#logger.error({ err: error, method: request.method }, 'request failed')
    })
    if (release !== undefined) void settled.then(release)
    this.#inflight.add(settled)
    void settled.finally(() => this.#inflight.delete(settled))
  }

  #cancelStateless(params: Record<string, unknown> | undefined): void {
    const requestId = params?.requestId
    if (typeof requestId === 'string' || typeof requestId === 'number') this.#statelessInflight.get(requestId)?.()
  }

  async #initialize(request: JsonRpcRequest): Promise<void> {
    const response = await this.#open(request)
    if (response === undefined) return
    this.send(response)
    this.#logger.info({ requestId: request.id, method: 'initialize', outcome: 'result' in response ? 'result' : 'error' }, 'mcp request')
  }

  /** Opens the channel's session; its answer, or undefined when the channel ended meanwhile. */
  async #open(request: JsonRpcRequest): Promise<JsonRpcResponse | undefined> {
    const endpoint = this.#endpoint
    let opened
    try {
      opened = await openSession(endpoint, request, this.#caller, this.#logger, this.#limits?.route)
    } catch (error) {
      this.#logger.error({ err: error }, 'initialize failed')
      return errorMessage(request.id, RpcCode.InternalError, 'Internal error')
    }
    // A channel has no status line: a refusal is its JSON-RPC error alone.
    if (opened.refusal !== undefined) return errorMessage(request.id, opened.refusal.rpcCode, opened.refusal.message, opened.refusal.data)
    const id = opened.record.id
    const overQuota = await this.#admitSession(request, id)
    if (overQuota !== undefined || this.#ended) {
      await endpoint.deleteSession(id).catch(() => undefined)
      return overQuota
    }
    this.#sessionId = id
    this.#logger = this.#logger.child({ sessionId: id })
    endpoint.openOutlet(id, this.#outlet)
    this.#keepAlive = setInterval(() => endpoint.store.touch(id), Math.max(1000, endpoint.idleTtlMs / 2))
    this.#keepAlive.unref()
    return opened.response
  }

  /** sessions_per_principal: the refusal when the new session is one too many (or the limiter is away). */
  async #admitSession(request: JsonRpcRequest, sessionId: string): Promise<JsonRpcResponse | undefined> {
    if (this.#limits === undefined) return undefined
    try {
      return await this.#limits.admitSession(request, sessionId)
    } catch (error) {
      this.#logger.warn({ err: error }, 'limiter unavailable')
      return storeUnavailable(request.id)
    }
  }
}

/** A request's sink on a message channel: everything goes on the channel; nothing can be detached. */
class ChannelSink implements RequestSink {
  #done = false
  readonly #session: MessageSession
  readonly #id: RequestId
  readonly #method: string
  readonly #started = performance.now()

  constructor(session: MessageSession, request: JsonRpcRequest) {
    this.#session = session
    this.#id = request.id
    this.#method = request.method
  }

  send(message: JsonRpcMessage): void {
    if (!this.#done) this.#session.send(message)
  }

  respond(message: JsonRpcResponse): void {
    if (this.#done) return
    this.#session.send(message)
    this.#end('error' in message ? 'error' : 'result')
  }

  abandon(): void {
    if (!this.#done) this.#end('cancelled')
  }

  detach(): boolean {
    return false
  }

  #end(outcome: string): void {
    this.#done = true
    const ms = Math.round((performance.now() - this.#started) * 100) / 100
    this.#session.logger.info({ requestId: this.#id, method: this.#method, outcome, ms }, 'mcp request')
  }
}

/** A stateless request's sink on a message channel; its close listener is what cancellation calls. */
class StatelessChannelSink extends ChannelSink implements StatelessSink {
  readonly #id: RequestId
  readonly #inflight: Map<RequestId, () => void>

  constructor(session: MessageSession, request: JsonRpcRequest, inflight: Map<RequestId, () => void>) {
    super(session, request)
    this.#id = request.id
    this.#inflight = inflight
  }

  override respond(message: JsonRpcResponse): void {
    this.#inflight.delete(this.#id)
    super.respond(message)
  }

  override abandon(): void {
    this.#inflight.delete(this.#id)
    super.abandon()
  }

  onClose(listener: () => void): void {
    const previous = this.#inflight.get(this.#id)
    this.#inflight.set(this.#id, () => {
      previous?.()
      listener()
    })
  }
}

/** The answer to a request the session store could not serve (its backend's words are logged, not sent). */
function storeUnavailable(id: RequestId): JsonRpcResponse {
  const row = EdgeCode.MCP_EDGE_STORE_UNAVAILABLE
  return errorMessage(id, row.rpc, row.message)
}
