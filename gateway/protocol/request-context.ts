/**
 * The `ctx` a handler callback receives, one per request. Cheap to make: the AbortController is only
 * created when a handler reads `signal`, and nothing is registered beyond the in-flight entry that
 * lets notifications/cancelled find the request.
 */
import { EdgeError } from '../errors.ts'
import type { ClientRequestOptions, RequestContext, SessionView, UrlElicitation } from './context.ts'
import type { JsonRpcMessage, RequestId } from './jsonrpc.ts'
import { notification } from './jsonrpc.ts'
import { askClient, createMessage, elicit, listRoots, type Ask } from './client-requests.ts'
import type { InFlight, LiveSession } from './live-sessions.ts'
import type {
  CreateMessageOptions,
  CreateMessageResult,
  ElicitationSchema,
  ElicitResult,
  JsonObject,
  LogLevel,
  Root,
  SamplingMessage,
} from './mcp-types.ts'
import { LOG_LEVELS } from './mcp-types.ts'
import type { RequestSink } from './sink.ts'

/** Default reconnect delay a closed stream asks the client to wait, in milliseconds. */
const RECONNECT_DELAY_MS = 1000
import type { SessionRecord } from '../store/store.ts'

/** What a context needs from the endpoint that created it. */
export interface ContextHost {
  /** Milliseconds to wait for a client's answer by default (the route's read_timeout). */
  readonly readTimeoutMs: number
  /** Whether the route declares the logging capability. */
  readonly logging: boolean
  /** Writes a handler's log call to the gateway log. */
  logToGateway(level: LogLevel, data: unknown, logger: string | undefined, sessionId: string): void
  /** A server→client request id, unique within the session. */
  nextClientRequestId(): string
  sessionView(record: SessionRecord): SessionView
}

const levelRank = new Map<string, number>(LOG_LEVELS.map((level, rank) => [level, rank]))

/** True when a message at `level` passes the session's minimum level. */
export function levelPasses(level: LogLevel, minimum: LogLevel | undefined): boolean {
  return minimum === undefined || (levelRank.get(level) ?? 0) >= (levelRank.get(minimum) ?? 0)
}

export class HandlerRequestContext implements RequestContext, InFlight {
  readonly requestId: RequestId
  readonly _meta: JsonObject | undefined
  #controller: AbortController | undefined
  #cancelReason: string | undefined
  #session: SessionView | undefined
  readonly #host: ContextHost
  readonly #record: SessionRecord
  readonly #sink: RequestSink
  readonly #live: LiveSession

  constructor(host: ContextHost, record: SessionRecord, live: LiveSession, requestId: RequestId, meta: JsonObject | undefined, sink: RequestSink) {
    this.#host = host
    this.#record = record
    this.#live = live
    this.requestId = requestId
    this._meta = meta
    this.#sink = sink
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#cancelReason !== undefined) this.#controller.abort(this.#cancelReason)
    }
    return this.#controller.signal
  }

  get cancelled(): boolean {
    return this.#cancelReason !== undefined
  }

  get session(): SessionView {
    return (this.#session ??= this.#host.sessionView(this.#record))
  }

  cancel(reason: string): void {
    if (this.#cancelReason !== undefined) return
    this.#cancelReason = reason
    this.#controller?.abort(reason)
  }

  progress(progress: number, total?: number, message?: string): boolean {
    if (this.#cancelReason !== undefined) return false
    const token = this._meta?.progressToken
    if (typeof token !== 'string' && typeof token !== 'number') return true
    const params: JsonObject = { progressToken: token, progress }
    if (total !== undefined) params.total = total
    if (message !== undefined) params.message = message
    this.#sink.send(notification('notifications/progress', params))
    return true
  }

  log(level: LogLevel, data: unknown, logger?: string): void {
    this.#host.logToGateway(level, data, logger, this.#record.id)
    if (this.#cancelReason !== undefined || !this.#host.logging || !levelPasses(level, this.#record.logLevel)) return
    const params: JsonObject = { level, data }
    if (logger !== undefined) params.logger = logger
    this.#sink.send(notification('notifications/message', params))
  }

  elicit(message: string, schema: ElicitationSchema | UrlElicitation, options?: ClientRequestOptions): Promise<ElicitResult> {
    return elicit(this.#record.clientCapabilities, this.#asker(), message, schema, options)
  }

  elicitationComplete(elicitationId: string): void {
    this.#sink.send(notification('notifications/elicitation/complete', { elicitationId }))
  }

  createMessage(messages: SamplingMessage[], maxTokens: number, options?: CreateMessageOptions & ClientRequestOptions): Promise<CreateMessageResult> {
    return createMessage(this.#record.clientCapabilities, this.#asker(), messages, maxTokens, options)
  }

  listRoots(options?: ClientRequestOptions): Promise<Root[]> {
    return listRoots(this.#record.clientCapabilities, this.#asker(), options)
  }

  async ping(options?: ClientRequestOptions): Promise<void> {
    await this.#ask('ping', undefined, options)
  }

  /** `#ask` as a function, made only when a handler asks the client something (not per request). */
  #asker(): Ask {
    return (method, params, options) => this.#ask(method, params, options)
  }

  get requestState(): unknown {
    return undefined
  }

  /** A session runs its handler once per request, so there is no next round to keep state for. */
  setRequestState(_state: unknown): void {}

  closeStream(retryMs = RECONNECT_DELAY_MS): boolean {
    return this.#cancelReason === undefined && this.#sink.detach(retryMs)
  }

  /** Sends a server→client request on this request's stream and waits for the client's answer. */
  #ask(method: string, params: JsonObject | undefined, options: ClientRequestOptions = {}): Promise<unknown> {
    if (this.#cancelReason !== undefined) return Promise.reject(new EdgeError('MCP_EDGE_REQUEST_CANCELLED', 'Request cancelled'))
    return askClient({
      id: this.#host.nextClientRequestId(),
      method,
      params,
      options,
      defaultTimeoutMs: this.#host.readTimeoutMs,
      awaiting: this.#live.awaiting,
      send: (message) => this.#sink.send(message),
      signal: this.signal,
    })
  }
}
