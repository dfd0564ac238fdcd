// What a WebSocket client can make the gateway hold, bounded: a connection that never initializes is
// closed at the initialize deadline, a silent one at the idle timeout; one that talks stays.
import t from 'tap'
import { WebSocket } from 'ws'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { eventually } from '../fixtures/waiting.ts'

const server = { name: 'live', version: '1.0.0' }
const route = { location: '/live', handler: fixture('live'), transports: ['streamable_http', 'websocket'], server }
const wsUrl = (url: string) => `${url.replace(/^http/, 'ws')}/live`
const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

interface Raw { ws: WebSocket; closed: Promise<{ code: number; reason: string; at: number }>; messages: unknown[]; openedAt: number }

async function open(t: { teardown(fn: () => unknown): void }, url: string): Promise<Raw> {
  const ws = new WebSocket(url, 'mcp')
  const messages: unknown[] = []
  ws.on('message', (data) => messages.push(JSON.parse(data.toString())))
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString(), at: performance.now() })))
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  t.teardown(() => ws.terminate())
  return { ws, closed, messages, openedAt: performance.now() }
}

t.test('connections that never initialize are closed at the initialize deadline', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, websocket: { initialize_timeout: 0.3 } }])
  const silent = await Promise.all(Array.from({ length: 50 }, () => open(t, wsUrl(gateway.url))))
  const closes = await Promise.all(silent.map((raw) => raw.closed))
  t.ok(closes.every((close) => close.code === 1008), 'every one closed with 1008 (policy violation)')
  t.match(closes[0]!.reason, /initialize/, `the reason says why (${closes[0]!.reason})`)
  // Each from its own opening: on a busy machine opening fifty takes a while, and the deadline is each one's.
  const slowest = Math.max(...closes.map((close, n) => close.at - silent[n]!.openedAt))
  t.ok(slowest < 1500, `each closed within 1.5 s of its opening (slowest ${Math.round(slowest)} ms)`)
})

t.test('an initialized connection that stays silent is closed at the idle timeout; one that talks stays', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, websocket: { initialize_timeout: 0.3, idle_timeout: 0.6 } }])
  const quiet = await open(t, wsUrl(gateway.url))
  const talking = await open(t, wsUrl(gateway.url))
  // The quiet one's silence starts when its initialize leaves: the gateway's idle clock starts on receipt,
  // later still, so the close can never come before the timeout counted from here (the poll below would
  // start the count late by however long it took to notice the answer).
  const silentFrom = performance.now()
  for (const raw of [quiet, talking]) raw.ws.send(JSON.stringify(initialize))
  await eventually(() => quiet.messages.length === 1 && talking.messages.length === 1)
  const pinging = setInterval(() => talking.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })), 150)
  t.teardown(() => clearInterval(pinging))
  const close = await quiet.closed
  const after = close.at - silentFrom
  t.equal(close.code, 1000, 'the silent one is closed normally')
  t.match(close.reason, /idle/, `the reason says why (${close.reason})`)
  t.ok(after >= 500 && after < 1500, `after the idle timeout (${Math.round(after)} ms)`)
  await new Promise((resolve) => setTimeout(resolve, 700))
  t.equal(talking.ws.readyState, WebSocket.OPEN, 'the one that talks is still open')
  await eventually(async () => (await gateway.store.count('/live')) === 1)
  t.pass('the silent one\'s session ended with it')
})

t.test('defaults: 10 s to initialize, 600 s idle', async (t) => {
  const gateway = await gatewayWith(t, [route])
  t.same(gateway.endpoints.get('/live')!.route.websocket, { ping_interval: 30, max_message_size: 4194304, initialize_timeout: 10, idle_timeout: 600 })
})
