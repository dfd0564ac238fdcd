/**
 * The proxy hop in a trace: a proxied request is a CLIENT span under the request's SERVER span, and
 * its W3C `traceparent` goes upstream in `params._meta` (where the MCP semantic conventions put it,
 * and where an upstream on any transport finds it). Only called when `tracing.on`.
 *
 *   SERVER span (tracing.ts) ─► CLIENT span "tools/call search" ─► params._meta.traceparent ─► upstream
 */
import { SpanKind, SpanStatusCode, trace, ROOT_CONTEXT, type Span } from '@opentelemetry/api'
import type { JsonObject } from '../wire/mcp-types.ts'
import { tracing } from './tracing.ts'

/** Starts the CLIENT span of a request to `upstream`, a child of `parent` (the call's SERVER span) when known. */
export function startHopSpan(parent: Span | undefined, method: string, upstream: string, params: JsonObject): Span {
  const name = typeof params.name === 'string' ? params.name : undefined
  const attributes: Record<string, string> = { 'mcp.method.name': method, 'server.address': upstream, 'mcp-edge.upstream': upstream }
  if (method === 'tools/call' && name !== undefined) {
    attributes['gen_ai.tool.name'] = name
    attributes['gen_ai.operation.name'] = 'execute_tool'
  } else if (method === 'prompts/get' && name !== undefined) {
    attributes['gen_ai.prompt.name'] = name
  }
  const context = parent === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, parent)
  return tracing.tracer!.startSpan(name === undefined ? method : `${method} ${name}`, { kind: SpanKind.CLIENT, attributes }, context)
}

/** `params` with the span's `traceparent` (and `tracestate`) in its `_meta`; the caller's own are replaced. */
export function withTraceparent(params: JsonObject, span: Span): JsonObject {
  const spanContext = span.spanContext()
  const meta: JsonObject = { ...(params._meta as JsonObject | undefined) }
  meta.traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-0${(spanContext.traceFlags & 1).toString(16)}`
  const state = spanContext.traceState?.serialize()
  if (state !== undefined && state !== '') meta.tracestate = state
  else delete meta.tracestate
  return { ...params, _meta: meta }
}

/** Ends the hop's span: an error (`kind`) sets error.type and status ERROR. */
export function endHopSpan(span: Span, errorKind: string | undefined): void {
  if (errorKind !== undefined) {
    span.setAttribute('error.type', errorKind)
    span.setStatus({ code: SpanStatusCode.ERROR })
  }
  span.end()
}
