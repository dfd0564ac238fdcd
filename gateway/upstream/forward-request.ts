/**
 * The parts of one forwarded request that hold no route state: its client options, its stateless
 * round trip, its cancellation, and the kind of its failure (proxy-route.ts forwards).
 */
import { CancelledError, RpcError } from '../client/errors.ts'
import { EdgeError, McpError, RpcCode } from '../wire/errors.ts'
import { describeFailure } from './failure.ts'
import type { RequestOptions } from '../client/protocol.ts'
import { errorKindOf, type ErrorKind } from '../events/call-events.ts'
import type { RequestContext } from '../registry/context.ts'
import type { AbortLike } from '../wire/abort-like.ts'
import type { Caller } from '../wire/caller.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { relayToRequest } from './relay.ts'
import type { StatelessUpstream } from './stateless-upstream.ts'

/** `params` without the gateway's own requestState, which is no business of the upstream's. */
function withoutState(params: JsonObject): JsonObject {
  if (params.requestState === undefined) return params
  const { requestState, ...rest } = params
  void requestState
  return rest
}

/**
 * `ctx`'s cancellation as the client takes it: the request context's own LightAbort when it has one
 * (reading `ctx.signal` would make an AbortController for every proxied call), else its signal.
 */
export function cancellationOf(ctx: RequestContext): AbortLike {
  return (ctx as { readonly cancellation?: AbortLike }).cancellation ?? ctx.signal
}

/** Per-request options of `forward`. */
export interface ForwardExtra {
  /** Milliseconds this request may take; the upstream's timeout otherwise. */
  timeoutMs?: number
  /** `Mcp-Param-*` values, for a stateless upstream. */
  paramHeaders?: Record<string, string> | undefined
  /** Whom the request is for when it has no request context (an aggregated list, a forwarded setLevel). */
  who?: Caller | undefined
  /** The result goes to the client unread: it may come back unparsed, a VerbatimResult (RequestOptions.resultAsSent). */
  resultAsSent?: boolean
}

/**
 * A stateless round trip. The upstream's requestState rides inside this gateway's own (the client
 * retries with ours, which the dispatcher verifies), and is put back in place for the upstream.
 */
export async function statelessRequest(stateless: Pick<StatelessUpstream, 'request'>, name: string, method: string, params: JsonObject, ctx: RequestContext | undefined, timeoutMs: number, extra: ForwardExtra): Promise<JsonObject> {
  const kept = (ctx?.requestState as { upstreamState?: unknown } | undefined)?.upstreamState
  const sent = kept === undefined ? withoutState(params) : { ...params, requestState: kept as string }
  const onMessage = ctx === undefined ? undefined : (message: JsonRpcMessage) => relayToRequest(name, message, ctx)
  const result = await stateless.request(method, sent, { timeoutMs, signal: ctx?.signal, paramHeaders: extra.paramHeaders, onMessage, who: ctx?.caller ?? extra.who })
  if (result.resultType === 'input_required' && ctx !== undefined) ctx.setRequestState({ upstreamState: result.requestState })
  return result
}

/**
 * How many times its timeout a call that keeps reporting progress may run in all (the spec asks for
 * a maximum however much progress comes): 100 s at the default 10 s timeout.
 */
export const PROGRESS_TIMEOUT_FACTOR = 10

/**
 * The client's options for `ctx`'s request: its timeout, cancellation, progress, the context the
 * upstream's own requests are asked in, and whether its result may come back unparsed (ForwardExtra.resultAsSent).
 */
export function requestOptions(ctx: RequestContext | undefined, timeoutMs: number, resultAsSent = false): RequestOptions {
  const options: RequestOptions = { timeoutMs, resultAsSent }
  if (ctx === undefined) return options
  options.context = ctx
  options.signal = cancellationOf(ctx)
  const token = ctx._meta?.progressToken
  if (typeof token === 'string' || typeof token === 'number') {
    options.onProgress = (progress, total, message) => void ctx.progress(progress, total, message)
    // A call that reports progress is working: each report restarts its timeout, up to a bound.
    options.resetTimeoutOnProgress = true
    options.maxTotalTimeoutMs = timeoutMs * PROGRESS_TIMEOUT_FACTOR
  }
  return options
}

/** The kind of an upstream request's failure: the upstream's error code, a cancellation, or unavailable. */
export function upstreamErrorKind(error: unknown): ErrorKind {
  if (error instanceof RpcError) return errorKindOf({ jsonrpc: '2.0', id: 0, error: { code: error.code, message: '' } }) ?? 'rpc_error'
  if (error instanceof CancelledError) return 'cancelled'
  return 'unavailable'
}

/** An upstream failure as the JSON-RPC error the downstream client gets. */
export function clientErrorOf(name: string, error: unknown): McpError {
  if (error instanceof RpcError) return new McpError(error.code, error.message, error.data)
  // The credential's own errors (consent required, credential failed) already name the upstream and hold no secret.
  if (error instanceof EdgeError) return new McpError(error.rpcCode, error.message, error.data)
  if (error instanceof CancelledError) return new McpError(RpcCode.InternalError, 'Request cancelled')
  return new McpError(RpcCode.InternalError, `Upstream "${name}" is unavailable: ${describeFailure(error)}`, { upstream: name })
}
