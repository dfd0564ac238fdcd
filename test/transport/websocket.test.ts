// The WebSocket transport on real loopback sockets: the official SDK 1.x client for the features, a
// raw `ws` client for what a well-behaved client never sends.
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
} from '@modelcontextprotocol/sdk/types.js'
import { WebSocket, type ClientOptions } from 'ws'
import { observed } from '../e2e/fixtures/live.ts'
import { connect, fixture, gatewayWith } from '../e2e/harness.ts'
import { eventually } from '../fixtures/waiting.ts'
import { abandonSlow, slowWithProgress } from '../e2e/live-calls.ts'

// Node 20 has no global WebSocket; the SDK transport calls `new WebSocket(url, 'mcp')`.
;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket

const server = { name: 'live', version: '1.0.0' }
const route = { location: '/live', handler: fixture('live'), transports: ['streamable_http', 'websocket'], server }
const everything = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } }
const text = (result: { [key: string]: unknown }) => (result.content as { text: string }[])[0]!.text
const wsUrl = (url: string, path = '/live') => `${url.replace(/^http/, 'ws')}${path}`
const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

interface Teardown { teardown(fn: () => unknown): void }


/** The SDK client over WebSocket; closed at teardown. */
async function connectWs(t: Teardown, url: string, capabilities: ClientCapabilities = {}, setup?: (client: Client) => void): Promise<Client> {
  const client = new Client({ name: 'ws-test', version: '1.0.0' }, { capabilities })
  setup?.(client)
  await client.connect(new WebSocketClientTransport(new URL(url)))
  t.teardown(() => client.close())
  return client
}

interface Raw {
  ws: WebSocket
  /** The next message the server sends, parsed. */
  next(): Promise<Record<string, any>>
  closed: Promise<{ code: number; reason: string }>
}

/** A raw client that has completed the handshake; terminated at teardown. */
async function rawClient(t: Teardown, url: string, protocol: string | string[] = 'mcp', options: ClientOptions = {}): Promise<Raw> {
  const ws = new WebSocket(url, protocol, options)
  t.teardown(() => ws.terminate())
  const queue: Record<string, any>[] = []
  const waiting: ((message: Record<string, any>) => void)[] = []
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString())
    const waiter = waiting.shift()
    if (waiter !== undefined) waiter(message)
    else queue.push(message)
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  return { ws, closed, next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve))) }
}

/** A raw client that has initialized its session. */
async function rawSession(t: Teardown, url: string): Promise<Raw> {
  const raw = await rawClient(t, url)
  raw.ws.send(JSON.stringify(initialize))
  const response = await raw.next()
  if (response.result === undefined) throw new Error(`initialize failed: ${JSON.stringify(response)}`)
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
  return raw
}

/** The HTTP answer to a refused upgrade. */
function refusal(url: string, protocol: string | string[], options: ClientOptions = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocol, options)
    ws.on('open', () => reject(new Error('the upgrade was accepted')))
    ws.on('error', () => undefined)
    ws.on('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString()))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
    })
  })
}

t.test('initialize, tools/list and tools/call with progress over the SDK WebSocket transport', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connectWs(t, wsUrl(gateway.url))
  const seen = await slowWithProgress(t, client)
  // The SDK runs notification handlers a microtask late: when the last progress frame and the
  // response arrive in one read, it has already forgotten the token. The wire order is checked below.
  t.same(seen.slice(0, 2), [1, 2])
  t.equal(await gateway.store.count('/live'), 1, 'the connection is one session')

  const raw = await rawSession(t, wsUrl(gateway.url))
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'slow', arguments: { steps: 3 }, _meta: { progressToken: 'p' } } }))
  for (const step of [1, 2, 3]) t.match(await raw.next(), { method: 'notifications/progress', params: { progressToken: 'p', progress: step, total: 3 } })
  t.match(await raw.next(), { id: 'c', result: { content: [{ text: 'done after 3 steps' }] } }, 'progress, then the result, on one socket')
})

t.test('sampling, elicitation and roots go to the client over the socket and come back', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connectWs(t, wsUrl(gateway.url), everything, (c) => {
    c.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      role: 'assistant',
      model: 'test-model',
      content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` },
    }))
    c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }))
    c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] }))
  })
  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })), 'model test-model said: echo hi')
  t.equal(text(await client.callTool({ name: 'ask' })), 'Hello, Grace')
  t.equal(text(await client.callTool({ name: 'roots' })), 'file:///a,file:///b')
  t.equal(text(await client.callTool({ name: 'ping_client' })), 'pong')
})

t.test('cancellation: the handler sees its signal fire and the session goes on', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connectWs(t, wsUrl(gateway.url))
  await abandonSlow(t, client)
  await eventually(() => observed.aborted)
  t.equal(observed.completed, false)
  t.same(await client.ping(), {})
})

t.test('notifications outside requests arrive on the socket: resources/updated, list_changed', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const updates: string[] = []
  let listChanged = 0
  const client = await connectWs(t, wsUrl(gateway.url), {}, (c) => {
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri) })
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged++ })
  })
  const other = await connect(t, `${gateway.url}/live`)
  await client.subscribeResource({ uri: 'live://counter' })
  await other.callTool({ name: 'touch' })
  await eventually(() => updates.length === 1)
  t.same(updates, ['live://counter'])
  await other.callTool({ name: 'grow' })
  await eventually(() => listChanged === 1)
  t.pass('tools/list_changed arrived')
})

t.test('Streamable HTTP still works on the same path, beside a WebSocket session', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const ws = await connectWs(t, wsUrl(gateway.url))
  const http = await connect(t, `${gateway.url}/live`)
  t.equal(text(await http.callTool({ name: 'slow', arguments: { steps: 1 } })), 'done after 1 steps')
  t.equal(text(await ws.callTool({ name: 'slow', arguments: { steps: 1 } })), 'done after 1 steps')
  const sessionId = (http as unknown as { _transport: { sessionId: string } })._transport.sessionId
  await eventually(() => gateway.endpoints.get('/live')!.live.get(sessionId)?.outlet !== undefined)
  t.pass('the SDK client opened its GET SSE stream on the WebSocket path')
  const init = await fetch(`${gateway.url}/live`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(initialize),
  })
  const id = init.headers.get('mcp-session-id')!
  const get = await fetch(`${gateway.url}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } })
  t.equal(get.status, 200, 'a GET without Upgrade reaches the SSE handler')
  t.match(get.headers.get('content-type'), /^text\/event-stream/)
  await get.body?.cancel()
  t.equal(await gateway.store.count('/live'), 3, 'one WebSocket session, two HTTP sessions')
})

t.test('an upgrade on a route without the websocket transport is refused (404)', async (t) => {
  const gateway = await gatewayWith(t, [route, { location: '/http', handler: fixture('live'), server }])
  const refused = await refusal(wsUrl(gateway.url, '/http'), 'mcp')
  t.equal(refused.status, 404)
  t.match(JSON.parse(refused.body), { error: { message: /no WebSocket endpoint at \/http/ } })
  t.equal((await refusal(wsUrl(gateway.url, '/nowhere'), 'mcp')).status, 404)
  const http = await connect(t, `${gateway.url}/http`)
  t.same(await http.ping(), {})
})

t.test('the first request must be initialize; a second initialize is refused', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const raw = await rawClient(t, wsUrl(gateway.url))
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
  t.match(await raw.next(), { id: 1, error: { code: -32600, message: /first request must be initialize/ } })
  raw.ws.send(JSON.stringify({ ...initialize, id: 2 }))
  t.match(await raw.next(), { id: 2, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'live' } } })
  raw.ws.send(JSON.stringify({ ...initialize, id: 3 }))
  t.match(await raw.next(), { id: 3, error: { code: -32600, message: /already initialized/ } })
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }))
  t.match(await raw.next(), { id: 4, result: { tools: Array } })
})

t.test('malformed JSON and invalid JSON-RPC get error frames; the socket stays open', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const raw = await rawSession(t, wsUrl(gateway.url))
  raw.ws.send('{"jsonrpc": "2.0", "id": 1, "method": ')
  t.match(await raw.next(), { id: null, error: { code: -32700, message: /^Parse error/ } })
  raw.ws.send(JSON.stringify({ hello: 'world' }))
  t.match(await raw.next(), { id: null, error: { code: -32600 } })
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 42 }))
  t.match(await raw.next(), { id: 7, error: { code: -32600, message: /"method"/ } })
  raw.ws.send(JSON.stringify([{ jsonrpc: '2.0', id: 8, method: 'ping' }]))
  t.match(await raw.next(), { id: null, error: { code: -32600, message: /batches/ } })
  raw.ws.send('"just a string"')
  t.match(await raw.next(), { error: { code: -32600 } })
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'no/such/method' }))
  t.match(await raw.next(), { id: 9, error: { code: -32601 } })
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'ping' }))
  t.same(await raw.next(), { jsonrpc: '2.0', id: 10, result: {} })
  t.equal(raw.ws.readyState, WebSocket.OPEN)
})

t.test('a binary frame closes the connection with 1003 and ends the session', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const raw = await rawSession(t, wsUrl(gateway.url))
  raw.ws.send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })))
  t.match(await raw.closed, { code: 1003, reason: /binary/ })
  await eventually(async () => (await gateway.store.count('/live')) === 0)
})

t.test('a message over the route limit closes with 1009', async (t) => {
  const small = { ...route, location: '/small', websocket: { max_message_size: 1024 } }
  const gateway = await gatewayWith(t, [route, small])
  const raw = await rawSession(t, wsUrl(gateway.url, '/small'))
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2000) } }))
  t.match(await raw.closed, { code: 1009 }, 'over this route\'s limit')
  const big = await rawSession(t, wsUrl(gateway.url))
  big.ws.send('x'.repeat(4 * 1024 * 1024 + 1))
  t.match(await big.closed, { code: 1009 }, 'over every route\'s limit: ws refuses the frame itself')
  await eventually(async () => (await gateway.store.count('/live')) + (await gateway.store.count('/small')) === 0)
})

t.test('a client offering only other subprotocols is refused with a reason; none offered is accepted', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const refused = await refusal(wsUrl(gateway.url), ['graphql-ws', 'wamp'])
  t.equal(refused.status, 400)
  t.match(JSON.parse(refused.body), { error: { code: -32600, message: /subprotocol "mcp".*graphql-ws, wamp/ } })
  const offered = await rawClient(t, wsUrl(gateway.url), ['wamp', 'mcp'])
  t.equal(offered.ws.protocol, 'mcp', 'mcp is chosen among others')
  const none = await rawClient(t, wsUrl(gateway.url), [])
  t.equal(none.ws.protocol, '')
  none.ws.send(JSON.stringify(initialize))
  t.match(await none.next(), { result: { protocolVersion: '2025-06-18' } }, 'no subprotocol offered: accepted (lua-resty-mcp clients offer none)')
})

t.test('the Origin and Host checks of HTTP apply to the upgrade (403)', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, allowed_origins: ['https://app.example'] }])
  const evil = await refusal(wsUrl(gateway.url), 'mcp', { headers: { origin: 'http://evil.example' } })
  t.equal(evil.status, 403)
  t.match(JSON.parse(evil.body), { error: { message: /Origin or Host not allowed/ } })
  const host = await refusal(wsUrl(gateway.url), 'mcp', { headers: { host: 'rebound.example' } })
  t.equal(host.status, 403)
  const allowed = await rawClient(t, wsUrl(gateway.url), 'mcp', { headers: { origin: 'https://app.example' } })
  t.equal(allowed.ws.protocol, 'mcp')
  t.equal(await gateway.store.count('/live'), 0, 'no session for refused upgrades')
})

t.test('an abrupt disconnect mid-request cancels the handler and removes the session', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const raw = await rawSession(t, wsUrl(gateway.url))
  t.equal(await gateway.store.count('/live'), 1)
  raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow', arguments: { steps: 50 }, _meta: { progressToken: 'p' } } }))
  t.match(await raw.next(), { method: 'notifications/progress', params: { progress: 1 } })
  raw.ws.terminate()
  await eventually(() => observed.aborted)
  t.equal(observed.completed, false)
  await eventually(async () => (await gateway.store.count('/live')) === 0)
  t.equal([...gateway.endpoints.get('/live')!.live.ids()].length, 0, 'nothing held for it')
})

t.test('a peer that does not answer pings is dropped; one that does stays', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, websocket: { ping_interval: 0.1 } }])
  const answering = await rawSession(t, wsUrl(gateway.url))
  const mute = await rawClient(t, wsUrl(gateway.url), 'mcp', { autoPong: false })
  mute.ws.send(JSON.stringify(initialize))
  await mute.next()
  t.equal((await mute.closed).code, 1006, 'terminated without a close frame')
  t.equal(answering.ws.readyState, WebSocket.OPEN, 'the peer that answers pongs is still there')
  await eventually(async () => (await gateway.store.count('/live')) === 1)
})

t.test('a client that does not read is disconnected before its backlog grows without bound', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, websocket: { max_message_size: 4096 } }])
  const raw = await rawSession(t, wsUrl(gateway.url))
  const socket = (raw.ws as unknown as { _socket: { pause(): void } })._socket
  socket.pause()
  const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
  for (let i = 0; i < 20_000 && raw.ws.readyState === WebSocket.OPEN; i++) {
    raw.ws.send(request)
    if (i % 500 === 0) {
      await new Promise((resolve) => setImmediate(resolve))
      if ((await gateway.store.count('/live')) === 0) break
    }
  }
  await eventually(async () => (await gateway.store.count('/live')) === 0, 5000)
  t.pass('the session ended while the client was not reading')
})

t.test('closing the gateway closes its sockets and ends their sessions', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const raw = await rawSession(t, wsUrl(gateway.url))
  await gateway.close()
  // The endpoints end their sessions first (1000 "session ended"); sockets left then get 1001.
  const { code } = await raw.closed
  t.ok(code === 1000 || code === 1001, `closed with ${code}`)
  t.equal(await gateway.store.count('/live'), 0)
})
