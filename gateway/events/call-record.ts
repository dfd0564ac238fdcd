/**
 * One call on its way: the sink the method answers through, passing everything on to the transport's
 * sink and, once the answer has gone, counting the call (call-events.ts). What the method learns on
 * the way (the upstream that served it, the trace span it runs under) is noted here, so the call's
 * event says it without a second lookup.
 */
import type { Span } from '@opentelemetry/api'
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../wire/jsonrpc.ts'
import type { RequestSink } from '../protocol/sink.ts'
import type { Caller } from '../wire/caller.ts'
import { errorKindOf, type RouteCalls } from './call-events.ts'

/** The component a request names: a tool or prompt's name, a resource's URI. */
function componentOf(request: JsonRpcRequest): string | undefined {
  const params = request.params
  if (params === undefined) return undefined
  const method = request.method
  if (method === 'tools/call' || method === 'prompts/get') return typeof params.name === 'string' ? params.name : undefined
  if (method === 'resources/read' || method === 'resources/subscribe' || method === 'resources/unsubscribe') return typeof params.uri === 'string' ? params.uri : undefined
  return undefined
}

export class CallRecord implements RequestSink {
  readonly #sink: RequestSink & { onClose?: (listener: () => void) => void }
  readonly #calls: RouteCalls
  readonly #method: string
  readonly #component: string | undefined
  readonly #started: number
  readonly #session: string
  readonly #caller: Caller
  /** The request as the route served it: the audit sink digests its arguments, off the request path. */
  readonly request: JsonRpcRequest
  #done = false
  /** The upstream the call went to (a proxy route notes it). */
  upstream: string | undefined
  /** The SERVER span of the call when tracing is on: a proxied call's CLIENT span is its child. */
  span: Span | undefined
  /** The rule that decided the call when one did besides the content phase (`approval`); undefined: none. */
  decision: string | undefined
  /** The approval's id when the approval gate decided or refused the call (never a secret). */
  approval: string | undefined

  constructor(sink: RequestSink, calls: RouteCalls, request: JsonRpcRequest, session: string, caller: Caller, span?: Span) {
    this.#sink = sink
    this.#calls = calls
    this.#method = request.method
    this.#component = componentOf(request)
    this.#started = performance.now()
    this.#session = session
    this.#caller = caller
    this.request = request
    this.span = span
  }

  send(message: JsonRpcMessage): void {
    this.#sink.send(message)
  }

  /**
   * A stateless sink is told when its client goes: the record passes that on. A method on the class,
   * not a closure set on each record: a per-request closure capturing the record put the tools/call
   * bench's GC at 19% of its CPU (3% without), +10 µs a call.
   */
  onClose(listener: () => void): void {
    this.#sink.onClose?.(listener)
  }

  respond(message: JsonRpcResponse, httpStatus?: number, headers?: Readonly<Record<string, string>>): void {
    this.#sink.respond(message, httpStatus, headers)
    if (this.#done) return
    this.#done = true
    const error = errorKindOf(message)
    const text = error === undefined ? undefined : 'error' in message ? message.error.message : 'isError result'
    this.#calls.finish(this.#method, this.#component, (performance.now() - this.#started) / 1000, error, text, this)
  }

  abandon(): void {
    this.#sink.abandon()
    if (this.#done) return
    this.#done = true
    this.#calls.finish(this.#method, this.#component, (performance.now() - this.#started) / 1000, 'cancelled', 'cancelled', this)
  }

  detach(retryMs: number): boolean {
    return this.#sink.detach(retryMs)
  }

  /** For the event: the session id (hashed there), the principal, the upstream. */
  get session(): string {
    return this.#session
  }

  get principal(): string | undefined {
    return this.#caller.principal
  }

  /** Who called, for the event's issuer and client id (claims of a verified JWT; never the token). */
  get caller(): Caller {
    return this.#caller
  }
}

/** The record of the call `ctx` serves, if its calls are counted (a proxy notes its upstream there). */
export function callRecordOf(ctx: unknown): CallRecord | undefined {
  let sink = (ctx as { requestSink?: unknown } | undefined)?.requestSink
  // A route's filter phase wraps the record (phases/filter-phase.ts): the record is its inner sink.
  if (sink !== null && typeof sink === 'object' && !(sink instanceof CallRecord) && 'inner' in sink) sink = sink.inner
  // (The rewrite phase wraps the transport's sink, inside the record: nothing to unwrap for it.)
  return sink instanceof CallRecord ? sink : undefined
}
