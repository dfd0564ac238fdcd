/**
 * The filter phase of a route: every result of a component call or a list passes it before it leaves,
 * on the hot path and the Fastify path alike (both answer through the endpoint's dispatch, which wraps
 * the request's sink here). A route with neither `phases.filter` nor `filter:` has no FilterPhase, and
 * its sinks are not wrapped: it pays nothing.
 *
 *   method answers ─► FilterSink.respond ─► filter module (may replace or withhold) ─► built-ins ─► transport
 *                                         └► throws ─► log {ref, err} ─► client: MCP_EDGE_RESULT_WITHHELD (ref R)
 */
import type { Logger } from 'pino'
import { reportFailure } from '../registry/failure-report.ts'
import { EdgeCode } from '../wire/errors.ts'
import { errorMessage, resultMessage, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { RequestSink } from '../protocol/sink.ts'
import { CallRecord } from '../events/call-record.ts'
import type { BuiltinFilter } from './builtin-filter.ts'

/** The results the filter sees: component calls and the lists. */
export const FILTERED_METHODS: ReadonlySet<string> = new Set([
  'tools/call', 'prompts/get', 'resources/read',
  'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list',
])

/** What a filter module is given for one result. */
export interface FilterCall {
  readonly route: string
  readonly method: string
  /** The tool or prompt name, or the resource URI; undefined for a list. */
  readonly component: string | undefined
  /** The caller's `sub`, if known. */
  readonly principal: string | undefined
  /** The result as it would leave (the module may return a changed copy; it must not mutate it). */
  readonly result: JsonObject
}

/** undefined: pass as is; an object: the result that leaves instead; false: withhold it. */
export type FilterAnswer = JsonObject | false | undefined | void

/** A filter module's default export. */
export type FilterModule = (call: FilterCall) => FilterAnswer | Promise<FilterAnswer>

function componentOf(request: JsonRpcRequest): string | undefined {
  const params = request.params
  if (params === undefined) return undefined
  const name = request.method === 'resources/read' ? params.uri : params.name
  return typeof name === 'string' ? name : undefined
}

export class FilterPhase {
  readonly #route: string
  readonly #module: FilterModule | undefined
  readonly #builtin: BuiltinFilter | undefined
  readonly #logger: Logger

  constructor(route: string, module: FilterModule | undefined, builtin: BuiltinFilter | undefined, logger: Logger) {
    this.#route = route
    this.#module = module
    this.#builtin = builtin
    this.#logger = logger
  }

  /** `sink`, or a sink that filters its result first when `request` is one the filter sees. */
  wrap<S extends RequestSink>(sink: S, request: JsonRpcRequest, principal: string | undefined): S {
    if (!FILTERED_METHODS.has(request.method)) return sink
    return new FilterSink(sink, this, request, principal) as unknown as S
  }

  /** The answer that leaves for `message`; a promise only when the module returned one. */
  filter(request: JsonRpcRequest, principal: string | undefined, message: JsonRpcResponse): JsonRpcResponse | Promise<JsonRpcResponse> {
    if (!('result' in message)) return message
    if (this.#module === undefined) return this.#builtins(request, message.result, message)
    let answer: FilterAnswer | Promise<FilterAnswer>
    try {
      answer = this.#module({ route: this.#route, method: request.method, component: componentOf(request), principal, result: message.result })
    } catch (error) {
      return this.#failed(request, error)
    }
    if (answer instanceof Promise) {
      return answer.then((settled) => this.#after(request, message, settled), (error: unknown) => this.#failed(request, error))
    }
    return this.#after(request, message, answer)
  }

  #after(request: JsonRpcRequest, message: JsonRpcResponse & { result: JsonObject }, answer: FilterAnswer): JsonRpcResponse {
    if (answer === false) return withheld(request, 'the filter module withheld it')
    if (answer !== undefined && (answer === null || typeof answer !== 'object' || Array.isArray(answer))) {
      return this.#failed(request, new TypeError(`the filter module returned ${answer === null ? 'null' : typeof answer}, not an object, false or undefined`))
    }
    // Passed as it came: the method's own answer goes on (and the call's record sees nothing decided).
    return answer === undefined ? this.#builtins(request, message.result, message) : this.#builtins(request, answer, undefined)
  }

  /** `original` is the method's own answer, sent as is when nothing changed it. */
  #builtins(request: JsonRpcRequest, result: JsonObject, original: JsonRpcResponse | undefined): JsonRpcResponse {
    if (this.#builtin === undefined) return original ?? resultMessage(request.id, result)
    const verdict = this.#builtin.apply(request.method, result)
    if ('withheld' in verdict) return withheld(request, verdict.withheld)
    if ('stackTrace' in verdict) {
      const ref = reportFailure(this.#logger, new Error(verdict.stackTrace), { route: this.#route, tool: componentOf(request), phase: 'filter' }, 'tool error text carried a stack trace; withheld')
      return resultMessage(request.id, { content: [{ type: 'text', text: `Tool ${componentOf(request) ?? ''} failed (ref ${ref})` }], isError: true })
    }
    return verdict.result === result && original !== undefined ? original : resultMessage(request.id, verdict.result as JsonObject)
  }

  #failed(request: JsonRpcRequest, error: unknown): JsonRpcResponse {
    const ref = reportFailure(this.#logger, error, { route: this.#route, method: request.method, phase: 'filter' }, 'filter phase failed')
    const row = EdgeCode.MCP_EDGE_RESULT_WITHHELD
    return errorMessage(request.id, row.rpc, `${row.message} (ref ${ref})`)
  }
}

function withheld(request: JsonRpcRequest, why: string): JsonRpcResponse {
  const row = EdgeCode.MCP_EDGE_RESULT_WITHHELD
  return errorMessage(request.id, row.rpc, `${row.message}: ${why}`)
}

/** A request's sink whose response passes the filter; everything else goes straight through. */
export class FilterSink implements RequestSink {
  readonly inner: RequestSink & { onClose?: (listener: () => void) => void }
  readonly #phase: FilterPhase
  readonly #request: JsonRpcRequest
  readonly #principal: string | undefined

  constructor(inner: RequestSink, phase: FilterPhase, request: JsonRpcRequest, principal: string | undefined) {
    this.inner = inner
    this.#phase = phase
    this.#request = request
    this.#principal = principal
  }

  send(message: JsonRpcMessage): void {
    this.inner.send(message)
  }

  /** A stateless sink is told when its client goes: passed on (a method, not a closure per request; see CallRecord). */
  onClose(listener: () => void): void {
    this.inner.onClose?.(listener)
  }

  respond(message: JsonRpcResponse, httpStatus?: number, headers?: Readonly<Record<string, string>>): void {
    const filtered = this.#phase.filter(this.#request, this.#principal, message)
    if (filtered instanceof Promise) void filtered.then((answer) => this.#pass(message, answer, httpStatus, headers))
    else this.#pass(message, filtered, httpStatus, headers)
  }

  /** The answer on; one the filter changed (redacted, replaced, withheld) names the filter as what decided. */
  #pass(message: JsonRpcResponse, answer: JsonRpcResponse, httpStatus: number | undefined, headers: Readonly<Record<string, string>> | undefined): void {
    const inner = this.inner
    if (answer !== message && inner instanceof CallRecord) inner.decision = 'filter'
    inner.respond(answer, httpStatus, headers)
  }

  abandon(): void {
    this.inner.abandon()
  }

  detach(retryMs: number): boolean {
    return this.inner.detach(retryMs)
  }
}
