// Traces for real: a gateway process exporting OTLP/HTTP (JSON) to a receiver this test runs on
// loopback, driven by the official SDK client with a W3C traceparent header. And the same gateway
// without OTEL_* in its environment exports nothing.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { OTEL_KEYS, attributes, catalogRoute, exportTracesTo, receiver, until } from './fixtures/otlp-receiver.ts'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_ID = '00f067aa0ba902b7'

t.test('a tools/call is a SERVER span under the traceparent the client sent, exported over OTLP/HTTP', async (t) => {
  const otlp = await receiver(t)
  exportTracesTo(t, otlp.endpoint)
  const gateway = await startGatewayProcess(t, { routes: [catalogRoute] })
  const client = new Client({ name: 'trace-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/catalog`), {
    requestInit: { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: 'vendor=1' } },
  }))
  t.teardown(() => client.close())

  const echoed = await client.callTool({ name: 'echo', arguments: { message: 'hi' } })
  t.equal(echoed.isError, undefined, 'the call itself succeeded')
  const span = await until(() => otlp.spans().find((s) => s.name === 'tools/call echo'))
  t.equal(span.kind, 2, 'kind SERVER')
  t.equal(span.traceId, TRACE_ID, 'the trace is the one the client sent')
  t.equal(span.parentSpanId, PARENT_ID, 'its parent is the span the client sent')
  const seen = attributes(span.attributes)
  t.equal(seen['mcp.method.name'], 'tools/call')
  t.equal(seen['gen_ai.tool.name'], 'echo')
  t.equal(seen['gen_ai.operation.name'], 'execute_tool')
  t.equal(seen['network.transport'], 'tcp')
  t.match(seen['mcp.protocol.version'], /^\d{4}-\d{2}-\d{2}$/)
  t.match(seen['mcp.session.id'], /^[0-9a-f]{16}$/, 'the session id, hashed (a trace backend never holds a live session id)')
  t.ok(seen['jsonrpc.request.id'] !== undefined, 'the request id')
  t.equal(seen['error.type'], undefined, 'no error')
  t.not(span.status?.code, 2, 'status is not ERROR')
  const resource = attributes(otlp.requests[0]!.resourceSpans[0]!.resource.attributes)
  t.equal(resource['service.name'], 'mcp-edge', 'the default service name')

  const failed = await client.callTool({ name: 'fail', arguments: {} })
  t.equal(failed.isError, true)
  const failure = await until(() => otlp.spans().find((s) => s.name === 'tools/call fail'))
  t.equal(attributes(failure.attributes)['error.type'], 'tool_error')
  t.equal(failure.status?.code, 2, 'status ERROR')

  // _meta.traceparent wins over the header.
  const metaTrace = 'a'.repeat(32)
  await client.callTool({ name: 'echo', arguments: { message: 'meta' }, _meta: { traceparent: `00-${metaTrace}-${'b'.repeat(16)}-01` } })
  const fromMeta = await until(() => otlp.spans().find((s) => s.traceId === metaTrace))
  t.equal(fromMeta.parentSpanId, 'b'.repeat(16), 'params._meta.traceparent is the parent')

  await t.rejects(client.request({ method: 'prompts/get', params: { name: 'no-such-prompt' } }, (await import('@modelcontextprotocol/sdk/types.js')).GetPromptResultSchema))
  const refused = await until(() => otlp.spans().find((s) => s.name === 'prompts/get no-such-prompt'))
  const refusedSeen = attributes(refused.attributes)
  t.equal(refusedSeen['gen_ai.prompt.name'], 'no-such-prompt')
  t.match(refusedSeen['error.type'], /^-32\d{3}$/, 'error.type is the JSON-RPC code')
  t.equal(refused.status?.code, 2)
})

t.test('off: without OTEL_* (and with OTEL_SDK_DISABLED=true) the gateway exports no span', async (t) => {
  const otlp = await receiver(t)
  for (const key of OTEL_KEYS) delete process.env[key]
  t.teardown(() => { for (const key of OTEL_KEYS) delete process.env[key] })
  const plain = await startGatewayProcess(t, { routes: [catalogRoute] })
  Object.assign(process.env, { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' })
  const disabled = await startGatewayProcess(t, { routes: [catalogRoute] })
  for (const gateway of [plain, disabled]) {
    const client = new Client({ name: 'trace-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/catalog`), {
      requestInit: { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } },
    }))
    await client.callTool({ name: 'echo', arguments: { message: 'hi' } })
    await client.close()
    t.notOk(gateway.logs.some((line) => String(line.msg).startsWith('traces:')), 'tracing was not turned on')
  }
  // Ten times the batch delay the disabled gateway was given: a span would have been exported by now.
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.equal(otlp.requests.length, 0, 'the receiver got nothing')
})
