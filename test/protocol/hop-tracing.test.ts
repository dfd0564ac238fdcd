// One trace across the proxy hop: a downstream client that traces (the OpenTelemetry SDK in this
// test, its OTLP exporter), a gateway of 2 workers with a proxy route, and an upstream gateway that
// traces too, all exporting OTLP/HTTP to one receiver on loopback. The client's span is the parent
// of the gateway's SERVER span, whose CLIENT span (the hop) is the parent of the upstream's SERVER span.
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { SpanKind } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { attributes, catalogRoute, exportTracesTo, receiver, until, type OtlpSpan } from './fixtures/otlp-receiver.ts'


t.test('one trace: downstream client → gateway SERVER span → hop CLIENT span → upstream SERVER span', async (t) => {
  const otlp = await receiver(t)
  exportTracesTo(t, otlp.endpoint)
  process.env.OTEL_SERVICE_NAME = 'upstream'
  const upstream = await startGatewayProcess(t, { routes: [catalogRoute] })
  process.env.OTEL_SERVICE_NAME = 'gateway'
  const gateway = await startGatewayProcess(t, {
    workers: 2,
    routes: [{ location: '/front', upstreams: [{ name: 'shop', url: `${upstream.url}/catalog` }], server: { name: 'front', version: '1.0.0' } }],
  }, 2, 60_000)

  // The downstream client traces with the OpenTelemetry SDK and sends its span in params._meta.
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'downstream-client' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: otlp.endpoint }) })],
  })
  t.teardown(() => provider.shutdown())
  const tracer = provider.getTracer('test-client')
  const client = new Client({ name: 'hop-trace-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/front`)))
  t.teardown(() => client.close())
  const tools = await client.listTools()
  const echo = tools.tools.find((tool) => tool.name.endsWith('echo'))!
  t.ok(echo, 'the upstream\'s echo, through the proxy route')

  const span = tracer.startSpan(`tools/call ${echo.name}`, { kind: SpanKind.CLIENT, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': echo.name } })
  const { traceId, spanId } = span.spanContext()
  const echoed = await client.callTool({ name: echo.name, arguments: { message: 'across the hop' }, _meta: { traceparent: `00-${traceId}-${spanId}-01` } })
  span.end()
  t.match(JSON.stringify(echoed.content), 'across the hop')

  const service = (name: string) => (s: OtlpSpan): boolean =>
    otlp.requests.some((r) => r.resourceSpans.some((rs) => attributes(rs.resource.attributes)['service.name'] === name && rs.scopeSpans.some((ss) => ss.spans.includes(s))))
  const inTrace = (): OtlpSpan[] => otlp.spans().filter((s) => s.traceId === traceId)
  const clientSpan = await until(() => inTrace().find(service('downstream-client')))
  const server = await until(() => inTrace().find((s) => s.kind === 2 && service('gateway')(s)))
  const hop = await until(() => inTrace().find((s) => s.kind === 3 && service('gateway')(s)))
  const upstreamServer = await until(() => inTrace().find((s) => s.kind === 2 && service('upstream')(s)))

  t.equal(clientSpan.spanId, spanId)
  t.equal(server.parentSpanId, spanId, 'the gateway\'s SERVER span is the client span\'s child (from params._meta)')
  t.equal(server.name, `tools/call ${echo.name}`)
  t.equal(hop.parentSpanId, server.spanId, 'the hop is a CLIENT span under the SERVER span')
  t.equal(upstreamServer.parentSpanId, hop.spanId, 'the upstream\'s SERVER span is the hop\'s child (traceparent in params._meta)')
  const serverSeen = attributes(server.attributes)
  t.equal(serverSeen['mcp.method.name'], 'tools/call')
  t.equal(serverSeen['gen_ai.tool.name'], echo.name)
  t.match(serverSeen['mcp.session.id'], /^[0-9a-f]{16}$/, 'the session id hashed')
  const hopSeen = attributes(hop.attributes)
  t.equal(hopSeen['mcp.method.name'], 'tools/call')
  t.equal(hopSeen['gen_ai.tool.name'], 'echo', 'the name the upstream knows')
  t.equal(hopSeen['mcp-edge.upstream'], 'shop')
  t.equal(attributes(upstreamServer.attributes)['gen_ai.tool.name'], 'echo')
  t.equal(new Set(inTrace().map((s) => s.traceId)).size, 1, 'one trace')
})

t.test('toward an HTTP upstream the trace context rides in the traceparent header too', async (t) => {
  const { createServer } = await import('node:http')
  const { StreamableHttpTransport } = await import('../../gateway/client/streamable-http.ts')
  const seen: Array<Record<string, unknown>> = []
  const server = createServer(async (request, response) => {
    let body = ''
    for await (const chunk of request) body += String(chunk)
    seen.push({ ...request.headers })
    const message = JSON.parse(body) as { id?: number }
    if (message.id === undefined) return void response.writeHead(202).end()
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const transport = new StreamableHttpTransport({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, standaloneStream: false })
  const answers: unknown[] = []
  transport.onmessage = (message) => void answers.push(message)
  await transport.start()
  const traceparent = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`
  await transport.send({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { traceparent, tracestate: 'edge=1' } } })
  await transport.send({ jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: { traceparent: 'not a traceparent\r\nx: y' } } })
  await transport.send({ jsonrpc: '2.0', id: 3, method: 'ping' })
  await until(() => (answers.length === 3 ? true : undefined))
  t.equal(seen[0]!.traceparent, traceparent)
  t.equal(seen[0]!.tracestate, 'edge=1')
  t.equal(seen[1]!.traceparent, undefined, 'a malformed one is not sent as a header')
  t.equal(seen[2]!.traceparent, undefined, 'a request without one has none')
  await transport.close()
})
