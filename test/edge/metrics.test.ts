// /metrics: what a Prometheus scrape of one gateway process sees after real MCP traffic.
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ConfigError, configFromObject } from '../../gateway/config/load.ts'
import { gatewayWith } from '../e2e/harness.ts'
import { post, rawSession } from '../e2e/sse-reader.ts'

const livePid = fileURLToPath(new URL('../cluster/fixtures/live-pid.ts', import.meta.url))
const route = { location: '/live', handler: livePid, server: { name: 'live', version: '1.0.0' } }

/** The value of one sample line of the exposition text, or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((entry) => entry.startsWith(`${line} `))
  return found === undefined ? undefined : Number(found.slice(line.length + 1))
}

t.test('requests by method and status, their durations, sessions and open streams', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  for (let id = 1; id <= 3; id++) await (await post(url, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami' } })).text()
  await (await post(url, 'no-such-session', { jsonrpc: '2.0', id: 9, method: 'tools/list' })).text()
  const streaming = await post(url, sessionId, { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'slow', arguments: { steps: 50 }, _meta: { progressToken: 'p' } } })

  const scrape = await fetch(`${gateway.url}/metrics`)
  t.equal(scrape.status, 200)
  t.match(scrape.headers.get('content-type'), /^text\/plain; version=0\.0\.4/, 'the Prometheus text format')
  const text = await scrape.text()
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="initialize",status="200"}'), 1)
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="tools/call",status="200"}'), 3, 'the three finished calls; the streaming one is not over')
  t.equal(sample(text, 'mcp_edge_request_duration_seconds_count{route="/live",method="tools/call"}'), 3)
  t.match(text, '# TYPE mcp_edge_request_duration_seconds histogram')
  t.equal(sample(text, 'mcp_edge_request_duration_seconds_bucket{le="30",route="/live",method="tools/call"}') ?? sample(text, 'mcp_edge_request_duration_seconds_bucket{route="/live",method="tools/call",le="30"}'), 3, 'every call within the largest bucket')
  t.equal(sample(text, 'mcp_edge_request_duration_seconds_bucket{route="/live",method="tools/call",le="+Inf"}'), 3)
  t.ok(sample(text, 'mcp_edge_request_duration_seconds_sum{route="/live",method="tools/call"}')! > 0, 'and their summed duration')
  t.equal(sample(text, 'mcp_edge_sessions{route="/live"}'), 1, 'the store\'s count')
  t.equal(sample(text, 'mcp_edge_open_streams'), 1, 'the SSE answer still streaming')
  t.ok(sample(text, 'mcp_edge_process_cpu_user_seconds_total') !== undefined, 'and Node\'s process metrics')
  t.notOk(text.includes('method="tools/list"'), 'a request refused before it reached a session is not an MCP request of this route')
  await streaming.body?.cancel()
})

t.test('metrics.enabled false: no /metrics; metrics.path moves it', async (t) => {
  const off = await gatewayWith(t, [route], { metrics: { enabled: false } })
  t.equal((await fetch(`${off.url}/metrics`)).status, 404)
  const moved = await gatewayWith(t, [route], { metrics: { path: '/internal/metrics' } })
  t.equal((await fetch(`${moved.url}/internal/metrics`)).status, 200)
})

t.test('a route cannot take the gateway\'s own paths', async (t) => {
  try {
    configFromObject({ routes: [{ ...route, location: '/metrics' }, { ...route, location: '/healthz' }] }, 'gateway.yaml')
    t.fail('the config loaded')
  } catch (error) {
    t.ok(error instanceof ConfigError)
    t.match((error as ConfigError).message, /routes\[0\]\.location.*"\/metrics" is the gateway's own/)
    t.match((error as ConfigError).message, /routes\[1\]\.location.*"\/healthz" is the gateway's own/)
  }
  t.doesNotThrow(() => configFromObject({ metrics: { enabled: false }, routes: [{ ...route, location: '/metrics' }] }, 'gateway.yaml'), 'free again when metrics are off')
})

t.test('labels come from a fixed set: an invented method is counted as "other", never as a label of its own', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  const invented = Array.from({ length: 100 }, (_, i) => `x${i}/${'m'.repeat(4096)}`)
  for (let batch = 0; batch < invented.length; batch += 25) {
    await Promise.all(invented.slice(batch, batch + 25).map(async (method, i) => (await post(url, sessionId, { jsonrpc: '2.0', id: batch + i + 1, method })).text()))
  }
  await (await post(url, sessionId, { jsonrpc: '2.0', method: 'notifications/invented' })).text()
  await (await post(url, sessionId, { jsonrpc: '2.0', id: 500, method: 'tools/list' })).text()
  const text = await (await fetch(`${gateway.url}/metrics`)).text()
  t.notOk(text.includes('mmmm'), 'no invented method in any label')
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="other",status="200"}'), 100, 'the invented requests, as "other"')
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="other",status="202"}'), 1, 'the invented notification, as "other"')
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="tools/list",status="200"}'), 1, 'a known method keeps its name')
  t.ok(text.length < 64 * 1024, `the scrape stays small (${text.length} bytes)`)
})

t.test('counts stay exact as methods and statuses alternate (each route remembers its last method and status)', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  // In turn: the same method again, another method, back; under "other", answers (200) and notifications (202).
  const sequence = ['tools/call', 'tools/call', 'tools/list', 'tools/call', 'x/invented', 'notifications/invented', 'x/invented', 'tools/list', 'notifications/invented', 'tools/call']
  let id = 0
  for (const method of sequence) {
    const message = method.startsWith('notifications/') ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', id: ++id, method, params: method === 'tools/call' ? { name: 'whoami' } : {} }
    await (await post(url, sessionId, message)).text()
  }
  const text = await (await fetch(`${gateway.url}/metrics`)).text()
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="tools/call",status="200"}'), 4)
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="tools/list",status="200"}'), 2)
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="other",status="200"}'), 2)
  t.equal(sample(text, 'mcp_edge_requests_total{route="/live",method="other",status="202"}'), 2)
  t.equal(sample(text, 'mcp_edge_request_duration_seconds_count{route="/live",method="tools/call"}'), 4)
  t.equal(sample(text, 'mcp_edge_request_duration_seconds_count{route="/live",method="other"}'), 4)
})
