// deploy/nginx/mcp-edge.conf for real: Debian's nginx, run by the test with that very file (only the
// upstream addresses and the listen port swapped for loopback ones), in front of two gateway
// processes sharing one Redis. A whole SDK session passes through it with every request landing on
// either gateway: sampling, elicitation, progress, cancellation, subscriptions; a stream cut mid-way
// resumes with Last-Event-ID; a WebSocket session upgrades through it.
import t from 'tap'
import { McpClient, WebSocketTransport } from '../../gateway/client/index.ts'
import { liveRoute, startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { nonStickySession } from '../cluster/non-sticky.ts'
import { post, rawSession, SseReader } from '../e2e/sse-reader.ts'
import { startRedis } from '../store/redis-server.ts'
import { nginxBinary, startNginx } from './nginx-process.ts'

if (nginxBinary === undefined) {
  t.fail('nginx is not installed (.ci/run installs Debian\'s nginx)')
  process.exit(1)
}

t.setTimeout(180_000)

const redis = await startRedis(t)
const store = { type: 'redis', url: redis.url, key_prefix: 'nginx:', command_timeout: 2, connect_timeout: 2 }
const route = { ...liveRoute, transports: ['streamable_http', 'websocket'] }
const gateways = (await Promise.all([
  startGatewayProcess(t, { store, routes: [route] }),
  startGatewayProcess(t, { store, routes: [route] }),
])) as [GatewayProcess, GatewayProcess]

const { url: balancer, port } = await startNginx(t, [new URL(gateways[0].url).host, new URL(gateways[1].url).host])

t.test('a whole SDK session through nginx, its requests spread over both gateways', async (t) => {
  // nginx keeps no log the forwarder's way; the session's own `whoami` calls show both gateways served it.
  await nonStickySession(t, { balancer: { url: balancer, log: [] }, processes: 2 })
})

t.test('a POST stream cut after event k resumes through nginx with exactly k+1…, in order, once', async (t) => {
  const sessionId = await rawSession(`${balancer}/live`)
  const cut = new AbortController()
  // 30 steps of 40 ms: a buffering proxy would hold the events until the call ends, 1.2 s later.
  const sent = Date.now()
  const response = await post(`${balancer}/live`, sessionId, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { steps: 30 }, _meta: { progressToken: 'p' } } }, cut.signal)
  t.equal(response.headers.get('content-type'), 'text/event-stream', 'progress makes it a stream, not buffered by nginx')
  const reader = new SseReader(response)
  t.equal((await reader.next())!.data, '', 'the priming event')
  const first = (await reader.next())!
  const k = (await reader.next())!
  t.same([first, k].map((event) => JSON.parse(event.data).params.progress), [1, 2], 'progress events arrive one by one')
  t.ok(Date.now() - sent < 1000, 'and as they are written (proxy_buffering off, and the gateway says X-Accel-Buffering: no), long before the call ends')
  cut.abort()

  const resumed = await fetch(`${balancer}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': k.id! } })
  t.equal(resumed.status, 200, 'the resume is accepted by whichever gateway nginx picked')
  const events = await new SseReader(resumed).rest()
  const messages = events.map((event) => JSON.parse(event.data))
  t.same(messages.slice(0, -1).map((message) => message.params.progress), Array.from({ length: 28 }, (_, n) => n + 3), 'the missed events, then the live ones: in order, once')
  t.same(messages.at(-1), { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'done after 30 steps' }] } }, 'then the response')
})

t.test('a WebSocket session upgrades through nginx', async (t) => {
  const client = new McpClient(new WebSocketTransport({ url: `ws://127.0.0.1:${port}/live` }))
  t.teardown(() => client.close())
  await client.initialize()
  const pids = new Set<number>()
  for (let n = 0; n < 3; n++) {
    const result = await client.callTool('whoami', {})
    pids.add(JSON.parse((result.content[0] as { text: string }).text).pid as number)
  }
  t.equal(pids.size, 1, 'one WebSocket is one connection to one gateway')
  t.ok(gateways.some((gateway) => gateway.logs.some((line) => line.pid === [...pids][0])), 'served by one of the two gateways')
})
