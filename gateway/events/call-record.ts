/**
 * One call on its way: the sink the method answers through, passing everything on to the transport's
 * sink and, once the answer has gone, counting the call (call-events.ts). What the method learns on
 * the way (the upstream that served it, the trace span it runs under) is noted here, so the call's
 * event says it without a second lookup.
 */
import type { Span } from '@opentelemetry/api'
// The module's binding, not the global: `globalThis.performance` is an accessor (a getter call and a
// global IC miss on every read, ~350 instructions a call in callgrind).
import { performance } from 'node:perf_hooks'
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../wire/jsonrpc.ts'
import type { RequestSink } from '../protocol/sink.ts'
import type { Caller } from '../wire/caller.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { errorKindOf, type ErrorKind, type RouteCalls } from './call-events.ts'

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
  /** True when a tools/call was answered from the result cache (registry/result-cache.ts), for the audit record. */
  cached = false

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
    // A component's scope refusal (registry/component-scopes.ts) says so in its data: the rule that decided.
    if (error !== undefined && this.decision === undefined && 'error' in message && (message.error.data as { error?: unknown } | undefined)?.error === 'insufficient_scope') this.decision = 'scope'
    this.#calls.finish(this.#method, this.#component, (performance.now() - this.#started) / 1000, error, text, this)
  }

  abandon(): void {
    this.#sink.abandon()
    if (this.#done) return
    this.#done = true
    this.#calls.finish(this.#method, this.#component, (performance.now() - this.#started) / 1000, 'cancelled', 'cancelled', this)
  }

  /**
   * Names a server→client round of this call (elicitation, sampling) to the call events' subscribers
   * (the audit record): its outcome (an elicitation's action as `message`) and how long the client took.
   */
  round(method: string, seconds: number, error: ErrorKind | undefined, message: string | undefined): void {
    this.#calls.round(method, this.#component, seconds, error, message, this)
  }

  /** True when someone reads this call's events (the audit record, a log module): a round is worth naming. */
  get subscribed(): boolean {
    return this.#calls.subscribed
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

/**
 * `asked` (a server→client request of the call `ctx` serves), named as a round of that call once it
 * settles, when someone reads the call events; `asked` itself otherwise.
 */
export function auditedRound<T>(ctx: unknown, method: string, asked: Promise<T>): Promise<T> {
  const record = callRecordOf(ctx)
  if (record === undefined || !record.subscribed) return asked
  const started = performance.now()
  return asked.then(
    (answer) => {
      const action = (answer as { action?: unknown } | undefined)?.action
      record.round(method, (performance.now() - started) / 1000, undefined, typeof action === 'string' ? action : undefined)
      return answer
    },
    (error: unknown) => {
      const seconds = (performance.now() - started) / 1000
      // 2026-07-28: the question leaves as an input_required result, the answer comes with the retry.
      if (error instanceof Error && error.name === 'InputRequired') record.round(method, seconds, undefined, 'input_required')
      else record.round(method, seconds, 'refused', error instanceof Error ? error.message : 'failed')
      throw error
    },
  )
}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The server→client method an answer of a 2026-07-28 round is to, by its shape (roots are no audited round). */
function answeredMethod(answer: JsonObject): string | undefined {
  if (typeof answer.action === 'string') return 'elicitation/create'
  if (answer.content !== undefined && typeof answer.role === 'string') return 'sampling/createMessage'
  return undefined
}

/**
 * The rounds of a stateless (2026-07-28) proxied call that the gateway passes on rather than asks
 * itself (an upstream's input_required result, a parked 2025 upstream's question): each answer the
 * client's retry carries (`inputResponses`, the user's action as the message) and each question the
 * result asks (`input_required`), named as rounds of the call, so of its upstream. `ownKeys`: the
 * gateway's own input requests (the approval gate's), which it names itself.
 */
export function relayedRounds(ctx: unknown, params: JsonObject, result: JsonObject, ownKeys: ReadonlySet<string>): void {
  const record = callRecordOf(ctx)
  if (record === undefined || !record.subscribed) return
  const answers = params.inputResponses
  if (isObject(answers)) {
    for (const key in answers) {
      const answer = answers[key]
      if (ownKeys.has(key) || !isObject(answer)) continue
      const method = answeredMethod(answer)
      if (method !== undefined) record.round(method, 0, undefined, typeof answer.action === 'string' ? answer.action : undefined)
    }
  }
  const asked = result.resultType === 'input_required' ? result.inputRequests : undefined
  if (!isObject(asked)) return
  for (const key in asked) {
    const method = (asked[key] as JsonObject | undefined)?.method
    if (!ownKeys.has(key) && (method === 'elicitation/create' || method === 'sampling/createMessage')) record.round(method, 0, undefined, 'input_required')
  }
}
