/**
 * OpenTelemetry spans for MCP requests, after the MCP semantic conventions: one SERVER span per
 * request the protocol layer dispatches, from dispatch until the answer is sent. Off unless the
 * `OTEL_*` environment asks for it or the process already has a global tracer provider (one
 * registered by `--import @opentelemetry/auto-instrumentations-node/register`, say). Off, the request
 * path pays one boolean check: `tracing.on` is read before anything here runs.
 *
 *   dispatch ─► tracing.on? ─no─► the method, as always
 *                   │ yes
 *                   ▼
 *   parent = params._meta.traceparent ?? HTTP traceparent ─► span ─► method(traced sink) ─► respond/abandon ends it
 */
import { context, ProxyTracerProvider, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api'
import type { Attributes, Context, Span, Tracer, TracerProvider } from '@opentelemetry/api'
import { createTraceState } from '@opentelemetry/api'
import type { Logger } from 'pino'
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { RequestSink } from './sink.ts'
import { sessionHash } from '../events/call-events.ts'

/** Read on the request path: when `on` is false nothing else here runs. */
export const tracing: { on: boolean; tracer: Tracer | undefined } = { on: false, tracer: undefined }

/** The request headers a parent context may come from (Fastify's and Node's header objects fit). */
export type TraceHeaders = Readonly<Record<string, string | string[] | undefined>>

/** What a span says about where the request came from, beside the request itself. */
export interface TraceFacts {
  /** The session's id; '' for a stateless request. */
  readonly sessionId: string
  readonly protocolVersion: string
  /** The caller's address: `stdio` means the stdio transport (`pipe`), anything else is TCP. */
  readonly address: string
  readonly headers: TraceHeaders | undefined
}

const TRACER_NAME = 'mcp-edge'
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|$)/
const INVALID_TRACE_ID = '0'.repeat(32)
const INVALID_SPAN_ID = '0'.repeat(16)
let shutdown: (() => Promise<void>) | undefined

/** True when the environment asks this gateway to export spans itself (OTLP over HTTP). */
export function wantsOtlp(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((name) => name.trim().toLowerCase())
  if (exporters?.includes('none')) return false
  return exporters?.includes('otlp') === true || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
}

/**
 * Turns tracing on when the environment asks for OTLP (this gateway then registers its own provider:
 * an OTLP/HTTP exporter behind a batch processor, service.name from OTEL_SERVICE_NAME, default
 * `mcp-edge`) or when a global tracer provider is already registered; otherwise leaves it off.
 * Loads the SDK only when it is used. Call once per process, before serving.
 */
export async function startTracing(logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (wantsOtlp(env)) {
    const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes, detectResources, envDetector }] = await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ])
    // envDetector reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; what it finds wins over the default name.
    const resource = resourceFromAttributes({ 'service.name': TRACER_NAME }).merge(detectResources({ detectors: [envDetector] }))
    const provider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchOptions(env) })] })
    trace.setGlobalTracerProvider(provider)
    shutdown = () => provider.shutdown()
    enable(provider)
    logger.info({ endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'default' }, 'traces: exporting OTLP over HTTP')
    return
  }
  const global = trace.getTracerProvider()
  const delegate = global instanceof ProxyTracerProvider ? global.getDelegate() : global
  // A fresh proxy's delegate is the API's no-op provider: the global one is that until someone registers.
  if (delegate !== new ProxyTracerProvider().getDelegate()) {
    enable(global)
    logger.info('traces: using the tracer provider registered in this process')
  }
}

/** Flushes and stops the provider this gateway registered (none: nothing to do). Never throws. */
export async function stopTracing(): Promise<void> {
  await shutdown?.().catch(() => undefined)
}

/** The OTEL_BSP_* settings (this SDK line no longer reads them itself); unset or invalid: the SDK's defaults. */
function batchOptions(env: NodeJS.ProcessEnv): Record<string, number> {
  const options: Record<string, number> = {}
  const keys = { OTEL_BSP_SCHEDULE_DELAY: 'scheduledDelayMillis', OTEL_BSP_EXPORT_TIMEOUT: 'exportTimeoutMillis', OTEL_BSP_MAX_QUEUE_SIZE: 'maxQueueSize', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'maxExportBatchSize' }
  for (const [key, option] of Object.entries(keys)) {
    const value = Number(env[key])
    if (env[key] !== undefined && Number.isInteger(value) && value > 0) options[option] = value
  }
  return options
}

function enable(provider: TracerProvider): void {
  tracing.tracer = provider.getTracer(TRACER_NAME)
  tracing.on = true
}

/**
 * Runs `dispatch` inside a SERVER span for `request` and hands it a sink that ends the span when the
 * answer is sent (or the request is abandoned). Only called when `tracing.on`.
 */
export function traceDispatch<S extends RequestSink, R>(request: JsonRpcRequest, sink: S, facts: TraceFacts, dispatch: (sink: S, span: Span) => R): R {
  const params = request.params
  const target = targetOf(request.method, params)
  const attributes: Attributes = {
    'mcp.method.name': request.method,
    'jsonrpc.request.id': String(request.id),
    'mcp.protocol.version': facts.protocolVersion,
    'network.transport': facts.address === 'stdio' ? 'pipe' : 'tcp',
  }
  // Hashed: the id is the session's bearer, and a trace backend is read by more people than the gateway.
  if (facts.sessionId !== '') attributes['mcp.session.id'] = sessionHash(facts.sessionId)
  if (request.method === 'tools/call' && target !== undefined) {
    attributes['gen_ai.tool.name'] = target
    attributes['gen_ai.operation.name'] = 'execute_tool'
  } else if (request.method === 'prompts/get' && target !== undefined) {
    attributes['gen_ai.prompt.name'] = target
  } else if (request.method.startsWith('resources/') && typeof params?.uri === 'string') {
    attributes['mcp.resource.uri'] = params.uri
  }
  const parent = parentOf(params?._meta as JsonObject | undefined, facts.headers)
  const span = tracing.tracer!.startSpan(target === undefined ? request.method : `${request.method} ${target}`, { kind: SpanKind.SERVER, attributes }, parent)
  return context.with(trace.setSpan(parent, span), dispatch, undefined, tracedSink(sink, span), span)
}

/** The tool or prompt a request names, if any. */
function targetOf(method: string, params: JsonObject | undefined): string | undefined {
  if ((method === 'tools/call' || method === 'prompts/get') && typeof params?.name === 'string') return params.name
  return undefined
}

/** The parent context: `params._meta` wins over the HTTP headers (MCP semantic conventions). */
function parentOf(meta: JsonObject | undefined, headers: TraceHeaders | undefined): Context {
  if (meta !== undefined && typeof meta.traceparent === 'string') return remoteContext(meta.traceparent, meta.tracestate)
  const header = headers?.traceparent
  if (typeof header === 'string') return remoteContext(header, headers?.tracestate)
  return ROOT_CONTEXT
}

/** A context whose span is the W3C `traceparent`'s; the root context when it does not parse. */
function remoteContext(traceparent: string, tracestate: unknown): Context {
  const match = TRACEPARENT.exec(traceparent.trim())
  if (match === null || match[1] === 'ff' || match[2] === INVALID_TRACE_ID || match[3] === INVALID_SPAN_ID) return ROOT_CONTEXT
  const state = Array.isArray(tracestate) ? tracestate.join(',') : tracestate
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: match[2]!,
    spanId: match[3]!,
    traceFlags: parseInt(match[4]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    traceState: typeof state === 'string' && state !== '' ? createTraceState(state) : undefined,
  })
}

/** `sink` with its answer ending `span`: error.type and status ERROR for an error or an isError result. */
function tracedSink<S extends RequestSink>(sink: S, span: Span): S {
  const traced: RequestSink & { onClose?: (listener: () => void) => void } = {
    send: (message: JsonRpcMessage) => sink.send(message),
    respond: (message: JsonRpcResponse, httpStatus?: number, headers?: Readonly<Record<string, string>>) => {
      const errorType = 'error' in message ? String(message.error.code) : (message.result as JsonObject).isError === true ? 'tool_error' : undefined
      if (errorType !== undefined) {
        span.setAttribute('error.type', errorType)
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'error' in message ? message.error.message : undefined })
      }
      span.end()
      sink.respond(message, httpStatus, headers)
    },
    abandon: () => {
      span.end()
      sink.abandon()
    },
    detach: (retryMs: number) => sink.detach(retryMs),
  }
  const closable = sink as RequestSink & { onClose?: (listener: () => void) => void }
  if (typeof closable.onClose === 'function') traced.onClose = (listener) => closable.onClose!(listener)
  return traced as S
}
