// Slow and greedy clients at the HTTP server: headers or bodies that never arrive are cut at their
// deadline with a JSON-RPC 408, connections over the per-address cap get a 429, and a real client's
// calls keep succeeding while an attacker holds as many connections as it may.
import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { post, rawSession } from '../e2e/sse-reader.ts'
import { eventually } from '../fixtures/waiting.ts'

// Timing under a loaded CI machine: the deadlines are short, the waits around them generous.
t.setTimeout(90_000)

const route = { location: '/live', handler: fixture('live'), server: { name: 'live', version: '1.0.0' } }
const fast = { connections: { header_timeout: 0.4, body_timeout: 0.4 } }

interface Raw { socket: Socket; received: () => string; closed: Promise<number> }

/** A raw TCP connection to `url`'s port, from `localAddress`; `received` is everything the server sent. */
async function rawConnection(t: { teardown(fn: () => unknown): void }, url: string, localAddress = '127.0.0.1'): Promise<Raw> {
  const port = Number(new URL(url).port)
  const socket = connect({ host: '127.0.0.1', port, localAddress })
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (text += chunk))
  socket.on('error', () => undefined)
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())))
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  t.teardown(() => socket.destroy())
  return { socket, received: () => text, closed }
}

function jsonRpcErrorOf(t: Test, response: string, status: number): void {
  t.match(response, new RegExp(`^HTTP/1\\.1 ${status} `), `HTTP ${status}`)
  const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { jsonrpc: string; id: unknown; error: { code: number; message: string } }
  t.match(body, { jsonrpc: '2.0', id: null, error: { code: -32000 } }, `a JSON-RPC error (${body.error?.message})`)
}

t.test('headers that never complete are cut at header_timeout, with a JSON-RPC 408', async (t) => {
  const gateway = await gatewayWith(t, [route], fast)
  const raw = await rawConnection(t, gateway.url)
  const started = performance.now()
  raw.socket.write('POST /live HTTP/1.1\r\nHost: 127.0.0.1\r\n')
  const after = (await raw.closed) - started
  t.ok(after >= 350 && after < 1500, `closed after ${Math.round(after)} ms`)
  jsonRpcErrorOf(t, raw.received(), 408)
})

t.test('a body never sent, or trickled, is cut at header_timeout + body_timeout', async (t) => {
  const gateway = await gatewayWith(t, [route], fast)
  const head = 'POST /live HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n'
  const silent = await rawConnection(t, gateway.url)
  const trickled = await rawConnection(t, gateway.url)
  const started = performance.now()
  silent.socket.write(head + '{"jsonrpc"')
  trickled.socket.write(head)
  const drip = setInterval(() => trickled.socket.writable && trickled.socket.write(' '), 50)
  t.teardown(() => clearInterval(drip))
  const [silentAt, trickledAt] = await Promise.all([silent.closed, trickled.closed])
  clearInterval(drip)
  for (const [name, at, raw] of [['silent', silentAt, silent], ['trickled', trickledAt, trickled]] as const) {
    const after = at - started
    t.ok(after >= 700 && after < 2500, `${name}: closed after ${Math.round(after)} ms`)
    jsonRpcErrorOf(t, raw.received(), 408)
  }
})

t.test('a request received whole is never cut: a tool slower than both timeouts answers', async (t) => {
  const gateway = await gatewayWith(t, [route], fast)
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  const started = performance.now()
  const response = await post(url, sessionId, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'slow', arguments: { steps: 30 } } })
  t.equal(response.status, 200)
  t.match(await response.json(), { id: 3, result: { content: [{ type: 'text' }] } })
  t.ok(performance.now() - started > 1000, 'the call took longer than header_timeout + body_timeout')
})

t.test('over max_per_address: 429 at once; the gateway keeps serving other clients during the attack', async (t) => {
  const gateway = await gatewayWith(t, [route], { connections: { header_timeout: 1, body_timeout: 1, max_per_address: 50 } })
  const url = `${gateway.url}/live`
  // The attacker: 150 connections from 127.0.0.2, each with complete headers and a body that never comes.
  const head = 'POST /live HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n'
  const attack = await Promise.all(Array.from({ length: 150 }, () => rawConnection(t, gateway.url, '127.0.0.2')))
  const refusedNow = () => attack.filter((raw) => raw.received().startsWith('HTTP/1.1 429 '))
  await eventually(() => refusedNow().length >= 100, 5000).catch(() => undefined)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const refused = refusedNow()
  t.equal(refused.length, 100, `all but 50 refused with 429, before they sent a byte (${refused.length})`)
  for (const raw of attack) if (raw.received() === '') raw.socket.write(head)
  jsonRpcErrorOf(t, refused[0]!.received(), 429)
  const open = await new Promise<number>((resolve, reject) => gateway.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))))
  t.ok(open <= 51, `the server holds ${open} connections`)

  // A real client from 127.0.0.1, meanwhile.
  const sessionId = await rawSession(url)
  const answer = await post(url, sessionId, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { steps: 1 } } })
  t.equal(answer.status, 200, 'a real client\'s call succeeds during the attack')
  t.match(await answer.json(), { id: 1, result: {} })
  // The held ones are cut at their deadline, freeing their places.
  await Promise.all(attack.map((raw) => raw.closed))
  const fresh = await rawConnection(t, gateway.url, '127.0.0.2')
  fresh.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
  await fresh.closed
  t.match(fresh.received(), /^HTTP\/1\.1 200 /, 'the attacker\'s address is served again once its connections are gone')
})

t.test('defaults', async (t) => {
  const gateway = await gatewayWith(t, [route])
  t.equal(gateway.app.server.headersTimeout, 60_000, 'header_timeout 60 s')
  t.equal(gateway.app.server.requestTimeout, 120_000, 'header_timeout + body_timeout (60 s) for the whole request')
})
