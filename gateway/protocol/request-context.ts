/**
 * The `ctx` a handler callback receives, one per request. Cheap to make: the AbortController is only
 * created when a handler reads `signal`, and nothing is registered beyond the in-flight entry that
 * lets notifications/cancelled find the request.
 */
import { EdgeError } from '../wire/errors.ts'
import type { ClientRequestOptions, RequestContext, SessionView, UrlElicitation } from '../registry/context.ts'
import type { JsonRpcMessage, RequestId } from '../wire/jsonrpc.ts'
import { notification } from '../wire/jsonrpc.ts'
import { askClient, createMessage, elicit, listRoots, type Ask } from './client-requests.ts'
import { auditedRound } from '../events/call-record.ts'
import { ContextBase } from './context-base.ts'
import type { LiveSessions } from './live-sessions.ts'
import type { RootsCache } from './roots-cache.ts'
import type {
  CreateMessageOptions,
  CreateMessageResult,
  ElicitationSchema,
  ElicitResult,
  JsonObject,
  LogLevel,
  Root,
  SamplingMessage,
} from '../wire/mcp-types.ts'
import type { RequestSink } from './sink.ts'

import type { SessionRecord } from '../store/store.ts'
import type { Caller } from '../wire/caller.ts'

/** Default reconnect delay a closed stream asks the client to wait, in milliseconds. */
const RECONNECT_DELAY_MS = 1000

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
  /** What this worker holds per session; a context takes its entry only when it asks the client something. */
  readonly live: LiveSessions
  /** The sessions' roots this worker keeps. */
  readonly roots: RootsCache
  /** Sends on a session's standalone stream, wherever it is held. */
  readonly notifier: { notifySession(sessionId: string, message: JsonRpcMessage): void }
}

export { levelPasses } from './context-base.ts'

/** The `ctx` of a request in a session (stateful wire, any transport). */
export class HandlerRequestContext extends ContextBase implements RequestContext {
  #session: SessionView | undefined
  readonly #host: ContextHost
  readonly #record: SessionRecord

  constructor(host: ContextHost, record: SessionRecord, requestId: RequestId, meta: JsonObject | undefined, sink: RequestSink, caller: Caller) {
    super(requestId, meta, sink, caller)
    this.#host = host
    this.#record = record
  }

  get session(): SessionView {
    return (this.#session ??= this.#host.sessionView(this.#record))
  }

  log(level: LogLevel, data: unknown, logger?: string): void {
    this.#host.logToGateway(level, data, logger, this.#record.id)
    this.notifyLog(level, data, logger, this.#host.logging ? this.#record.logLevel : null)
  }

  elicit(message: string, schema: ElicitationSchema | UrlElicitation, options?: ClientRequestOptions): Promise<ElicitResult> {
    return auditedRound(this, 'elicitation/create', elicit(this.#record.clientCapabilities, this.#asker(), message, schema, options))
  }

  elicitationComplete(elicitationId: string): void {
    this.sink.send(notification('notifications/elicitation/complete', { elicitationId }))
  }

  createMessage(messages: SamplingMessage[], maxTokens: number, options?: CreateMessageOptions & ClientRequestOptions): Promise<CreateMessageResult> {
    return auditedRound(this, 'sampling/createMessage', createMessage(this.#record.clientCapabilities, this.#asker(), messages, maxTokens, options))
  }

  listRoots(options?: ClientRequestOptions): Promise<Root[]> {
    const capabilities = this.#record.clientCapabilities
    return this.#host.roots.get(this.#record.id, capabilities, () => listRoots(capabilities, this.#asker(), options))
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
    return !this.cancelled && this.sink.detach(retryMs)
  }

  /** Sends a server→client request on this request's stream and waits for the client's answer. */
  #ask(method: string, params: JsonObject | undefined, options: ClientRequestOptions = {}): Promise<unknown> {
    if (this.cancelled) return Promise.reject(new EdgeError('MCP_EDGE_REQUEST_CANCELLED', 'Request cancelled'))
    return askClient({
      id: this.#host.nextClientRequestId(),
      method,
      params,
      options,
      defaultTimeoutMs: this.#host.readTimeoutMs,
      // Taken on the first ask: a handler that asks is asynchronous, and the endpoint releases the
      // entry when the request settles.
      awaiting: this.#host.live.hold(this.#record.id).awaiting,
      send: (message) => this.sink.send(message),
      signal: this.signal,
      sendWhenAborted: (message) => this.#host.notifier.notifySession(this.#record.id, message),
    })
  }
}
