/**
 * The `ctx` a handler callback receives, one per request. Cheap to make: the AbortController is only
 * created when a handler reads `signal`, and nothing is registered beyond the in-flight entry that
 * lets notifications/cancelled find the request.
 */
import { EdgeError } from '../errors.ts'
import type { ClientRequestOptions, RequestContext, SessionView, UrlElicitation } from './context.ts'
import type { JsonRpcMessage, RequestId } from './jsonrpc.ts'
import { notification } from './jsonrpc.ts'
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

  async elicit(message: string, schema: ElicitationSchema | UrlElicitation, options?: ClientRequestOptions): Promise<ElicitResult> {
    const elicitation = this.#record.clientCapabilities.elicitation
    if ('mode' in schema && schema.mode === 'url') {
      if (elicitation?.url === undefined) throw missingCapability('elicitation.url')
      const elicitationId = schema.elicitationId ?? crypto.randomUUID()
      const params = { mode: 'url', message, url: schema.url, elicitationId }
      return (await this.#ask('elicitation/create', params, options)) as ElicitResult
    }
    // `elicitation: {}` means form mode only (the 2025-06-18 shape).
    if (elicitation === undefined || (elicitation.url !== undefined && elicitation.form === undefined)) {
      throw missingCapability('elicitation.form')
    }
    return (await this.#ask('elicitation/create', { message, requestedSchema: schema }, options)) as ElicitResult
  }

  elicitationComplete(elicitationId: string): void {
    this.#sink.send(notification('notifications/elicitation/complete', { elicitationId }))
  }

  async createMessage(
    messages: SamplingMessage[],
    maxTokens: number,
    options: CreateMessageOptions & ClientRequestOptions = {},
  ): Promise<CreateMessageResult> {
    const sampling = this.#record.clientCapabilities.sampling
    if (sampling === undefined) throw missingCapability('sampling')
    if ((options.tools !== undefined || options.toolChoice !== undefined) && sampling.tools === undefined) {
      throw missingCapability('sampling.tools')
    }
    const { timeoutMs, onProgress, ...rest } = options
    const params: JsonObject = { ...rest, messages, maxTokens }
    return (await this.#ask('sampling/createMessage', params, { timeoutMs, onProgress })) as CreateMessageResult
  }

  async listRoots(options?: ClientRequestOptions): Promise<Root[]> {
    if (this.#record.clientCapabilities.roots === undefined) throw missingCapability('roots')
    const result = (await this.#ask('roots/list', undefined, options)) as { roots?: Root[] }
    return Array.isArray(result.roots) ? result.roots : []
  }

  async ping(options?: ClientRequestOptions): Promise<void> {
    await this.#ask('ping', undefined, options)
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
    const id = this.#host.nextClientRequestId()
    const timeoutMs = options.timeoutMs ?? this.#host.readTimeoutMs
    const onProgress = options.onProgress
    let body: JsonObject | undefined = params
    if (onProgress !== undefined) body = { ...params, _meta: { progressToken: id } }
    const request: JsonRpcMessage = body === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: body }
    const awaiting = this.#live.awaiting
    const sink = this.#sink
    return new Promise<unknown>((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer)
        awaiting.delete(id)
        this.#controller?.signal.removeEventListener('abort', onAbort)
      }
      const giveUp = (reason: string, error: Error): void => {
        settle()
        sink.send(notification('notifications/cancelled', { requestId: id, reason }))
        reject(error)
      }
      const onAbort = (): void => giveUp('the request that asked was cancelled', new EdgeError('MCP_EDGE_REQUEST_CANCELLED', 'Request cancelled'))
      const timer = setTimeout(
        () => giveUp('timed out', new EdgeError('MCP_EDGE_CLIENT_TIMEOUT', `The client did not answer ${method} within ${timeoutMs} ms`)),
        timeoutMs,
      )
      awaiting.set(id, {
        resolve: (result) => { settle(); resolve(result) },
        reject: (error) => { settle(); reject(error) },
        progress: (progress, total, message) => {
          if (onProgress?.(progress, total, message) === false) giveUp('cancelled by the server', new EdgeError('MCP_EDGE_REQUEST_CANCELLED', `${method} cancelled`))
        },
      })
      this.signal.addEventListener('abort', onAbort, { once: true })
      sink.send(request)
    })
  }
}

// Local errors, not McpError: an uncaught one in a tool becomes an isError result the model can read.
function missingCapability(capability: string): EdgeError {
  return new EdgeError('MCP_EDGE_CLIENT_CAPABILITY_MISSING', `The client did not declare the ${capability} capability`)
}
