/**
 * One request of a session, from the transport's hand-off to the sink's answer:
 *
 *   translate ─▶ rewrite phase ─▶ call record (+ trace span) ─▶ filter phase ─▶ catalogue ready ─▶ method ─▶ settle
 *                 │ refusal: counted, decided by 'rewrite'                                             │ sync: answered at once
 *                 ▼                                                                                     ▼ async: cancellable until settled
 *
 * Kept apart from the endpoint (which owns the route's sessions, notifications and lifecycle) because
 * this is the request path: each step costs nothing on a route that does not use it, and a request
 * whose method returns a value is answered without a promise. Failures become JSON-RPC errors here.
 */
import type { Logger } from 'pino'
import { CallRecord } from '../events/call-record.ts'
import type { RouteCalls } from '../events/call-events.ts'
import type { FilterPhase } from '../phases/filter-phase.ts'
import type { RewriteOutcome, RewritePhase } from '../phases/rewrite-phase.ts'
import { internalErrorText, reportFailure } from '../registry/failure-report.ts'
import { StoreUnavailableError, type SessionRecord } from '../store/store.ts'
import type { Caller } from '../wire/caller.ts'
import { EdgeCode, McpError, RpcCode } from '../wire/errors.ts'
import { errorMessage, resultMessage, type JsonRpcRequest, type JsonRpcResponse } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { MethodHandler, MethodHost } from './methods/index.ts'
import { HandlerRequestContext, type ContextHost } from './request-context.ts'
import type { RequestSink } from './sink.ts'
import { traceDispatch, tracing, type TraceHeaders } from './tracing.ts'

const EMPTY_PARAMS: JsonObject = Object.freeze({}) as JsonObject

/** The route as its request path sees it (the endpoint); the phases are read per request, so a reload's new ones apply at once. */
export interface SessionRequestHost extends MethodHost, ContextHost {
  readonly logger: Logger
  readonly translate: ((request: JsonRpcRequest) => JsonRpcRequest) | undefined
  readonly rewrite: RewritePhase | undefined
  readonly calls: RouteCalls | undefined
  readonly filter: FilterPhase | undefined
  /** Only right after a run-time change (or at start) is there a catalogue to read first: then a promise. */
  readonly catalogues: { ready(record: SessionRecord | undefined): Promise<void> | undefined }
  method(name: string): MethodHandler | undefined
}

export class SessionRequests {
  readonly #host: SessionRequestHost

  constructor(host: SessionRequestHost) {
    this.#host = host
  }

  /** McpEndpoint.handleRequest: never throws; synchronous when the method is, a promise otherwise. */
  handle(record: SessionRecord, request: JsonRpcRequest, sink: RequestSink, caller: Caller, headers: TraceHeaders | undefined): Promise<void> | undefined {
    const host = this.#host
    if (host.translate !== undefined) request = host.translate(request)
    const rewrite = host.rewrite
    if (rewrite === undefined || !rewrite.sees(request.method)) return this.#phases(record, request, sink, caller, headers)
    const outcome = rewrite.apply(request, caller.principal)
    if (outcome instanceof Promise) return outcome.then((settled) => this.#rewritten(record, settled, request, sink, caller, headers))
    return this.#rewritten(record, outcome, request, sink, caller, headers)
  }

  /** After the rewrite phase: its refusal (counted, decided by 'rewrite'), or the translated request on through the chain. */
  #rewritten(record: SessionRecord, outcome: RewriteOutcome, request: JsonRpcRequest, sink: RequestSink, caller: Caller, headers: TraceHeaders | undefined): Promise<void> | undefined {
    if ('refusal' in outcome) {
      const calls = this.#host.calls
      if (calls === undefined) return void sink.respond(outcome.refusal)
      const counted = new CallRecord(sink, calls, request, record.id, caller)
      counted.decision = 'rewrite'
      return void counted.respond(outcome.refusal)
    }
    return this.#phases(record, outcome.request, this.#host.rewrite!.wrap(sink, outcome.request, outcome.rules), caller, headers)
  }

  /** Counted (call events), filtered (the filter phase), then dispatched. */
  #phases(record: SessionRecord, request: JsonRpcRequest, sink: RequestSink, caller: Caller, headers: TraceHeaders | undefined): Promise<void> | undefined {
    const calls = this.#host.calls
    const filter = this.#host.filter
    if (tracing.on) {
      const facts = { sessionId: record.id, protocolVersion: record.protocolVersion, address: caller.address, headers }
      return traceDispatch(request, sink, facts, (traced, span) => {
        const counted = calls === undefined ? traced : new CallRecord(traced, calls, request, record.id, caller, span)
        return this.#dispatch(record, request, filter === undefined ? counted : filter.wrap(counted, request, caller.principal), caller)
      })
    }
    const counted = calls === undefined ? sink : new CallRecord(sink, calls, request, record.id, caller)
    return this.#dispatch(record, request, filter === undefined ? counted : filter.wrap(counted, request, caller.principal), caller)
  }

  #dispatch(record: SessionRecord, request: JsonRpcRequest, sink: RequestSink, caller: Caller): Promise<void> | undefined {
    const pending = this.#host.catalogues.ready(record)
    if (pending === undefined) return this.#dispatchNow(record, request, sink, caller)
    return pending.then(
      () => this.#dispatchNow(record, request, sink, caller),
      (error: unknown) => sink.respond(this.#errorResponse(request, record, error), httpStatusOf(error)),
    )
  }

  #dispatchNow(record: SessionRecord, request: JsonRpcRequest, sink: RequestSink, caller: Caller): Promise<void> | undefined {
    const method = this.#host.method(request.method)
    if (method === undefined) {
      sink.respond(errorMessage(request.id, RpcCode.MethodNotFound, `Method not found: ${request.method}`))
      return undefined
    }
    const params = request.params ?? EMPTY_PARAMS
    const ctx = new HandlerRequestContext(this.#host, record, request.id, params._meta as JsonObject | undefined, sink, caller)
    let outcome: JsonObject | Promise<JsonObject>
    try {
      outcome = method(this.#host, record, params, ctx)
    } catch (error) {
      sink.respond(this.#errorResponse(request, record, error), httpStatusOf(error))
      return undefined
    }
    if (!(outcome instanceof Promise)) {
      sink.respond(resultMessage(request.id, outcome))
      return undefined
    }
    return this.#settle(record, request, ctx, outcome, sink)
  }

  /** The rest of an asynchronous request: cancellable (notifications/cancelled) until it settles. */
  async #settle(record: SessionRecord, request: JsonRpcRequest, ctx: HandlerRequestContext, outcome: Promise<JsonObject>, sink: RequestSink): Promise<void> {
    const live = this.#host.live.hold(record.id)
    live.inflight.set(request.id, ctx)
    let response: JsonRpcResponse
    let httpStatus: number | undefined
    try {
      response = resultMessage(request.id, await outcome)
    } catch (error) {
      response = this.#errorResponse(request, record, error)
      httpStatus = httpStatusOf(error)
    } finally {
      live.inflight.delete(request.id)
      this.#host.live.release(record.id, live)
    }
    if (ctx.cancelled) sink.abandon()
    else sink.respond(response, httpStatus)
  }

  #errorResponse(request: JsonRpcRequest, record: SessionRecord, error: unknown): JsonRpcResponse {
    if (error instanceof McpError) return errorMessage(request.id, error.code, error.message, error.data)
    const logger = this.#host.logger
    if (error instanceof StoreUnavailableError) {
      logger.warn({ err: error, sessionId: record.id, method: request.method }, 'session store unavailable')
      const row = EdgeCode.MCP_EDGE_STORE_UNAVAILABLE
      return errorMessage(request.id, row.rpc, row.message)
    }
    const ref = reportFailure(logger, error, { sessionId: record.id, method: request.method, requestId: request.id })
    return errorMessage(request.id, RpcCode.InternalError, internalErrorText(ref))
  }
}

/** The HTTP status a failure asks for (a store outage: 503, like every other store failure); undefined: the usual. */
function httpStatusOf(error: unknown): number | undefined {
  return error instanceof StoreUnavailableError ? EdgeCode.MCP_EDGE_STORE_UNAVAILABLE.status : undefined
}
