/**
 * A request's W3C trace context on HTTP too: the MCP semantic conventions carry it in
 * `params._meta.traceparent`; an HTTP hop also says it in the `traceparent` (and `tracestate`)
 * header, so proxies and servers that trace by header join the same trace. A request without one
 * keeps its headers as they are (no copy).
 */
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/

function traceOf(params: JsonObject | undefined): { traceparent: string; tracestate: string | undefined } | undefined {
  const meta = params?._meta as JsonObject | undefined
  const traceparent = meta?.traceparent
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined
  const tracestate = typeof meta!.tracestate === 'string' && /^[\x20-\x7e]{1,512}$/.test(meta!.tracestate) ? meta!.tracestate : undefined
  return { traceparent, tracestate }
}

/** Adds the trace headers of `params` to `headers` (mutated). */
export function addTraceHeaders(headers: Record<string, string>, params: JsonObject | undefined): void {
  const trace = traceOf(params)
  if (trace === undefined) return
  headers.traceparent = trace.traceparent
  if (trace.tracestate !== undefined) headers.tracestate = trace.tracestate
}

/** `headers`, or a copy with the trace headers of `message` when it carries a trace context. */
export function withTraceHeaders(headers: Record<string, string>, message: JsonRpcMessage): Record<string, string> {
  if (!('method' in message)) return headers
  const trace = traceOf(message.params)
  if (trace === undefined) return headers
  const copy: Record<string, string> = { ...headers, traceparent: trace.traceparent }
  if (trace.tracestate !== undefined) copy.tracestate = trace.tracestate
  return copy
}
