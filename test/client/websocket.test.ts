// The WebSocket transport against a scripted `ws` server on loopback: subprotocol `mcp`, one
// JSON-RPC message per text frame, server→client requests, binary frames refused with 1003.
// Then once against the gateway's own WebSocket endpoint (the shared transport contract suite goes further).
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { WebSocketServer, type WebSocket } from 'ws'
import { CancelledError, McpClient, ProtocolError, TransportError, WebSocketTransport } from '../../gateway/client/index.ts'
import { eventually, gatewayWith, liveRoute, text } from './harness.ts'

interface Peer { url: string; frames: unknown[]; handshake: { protocol?: string; authorization?: string }; closeCodes: number[]; socket(): WebSocket }

/** A WebSocket server that plays a fixed MCP script and records every frame the client sent. */
async function scriptedServer(t: Test, pickProtocol = true): Promise<Peer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (offered) => (pickProtocol && offered.has('mcp') ? 'mcp' : false) })
  await new Promise<void>((resolve) => wss.once('listening', resolve))
  t.teardown(() => new Promise<void>((resolve) => { for (const client of wss.clients) client.terminate(); wss.close(() => resolve()) }))
  const peer: Peer = { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/mcp`, frames: [], handshake: {}, closeCodes: [], socket: () => current! }
  let current: WebSocket | undefined
  wss.on('connection', (socket, request) => {
    current = socket
    peer.handshake = { protocol: socket.protocol, authorization: request.headers.authorization }
    socket.on('close', (code) => peer.closeCodes.push(code))
    const send = (message: object): void => socket.send(JSON.stringify(message))
    socket.on('message', (data, isBinary) => {
      t.equal(isBinary, false, 'the client sends text frames')
      const message = JSON.parse(data.toString()) as { id?: number | string; method?: string; params?: Record<string, unknown>; result?: unknown }
      peer.frames.push(message)
      switch (message.method) {
        case 'initialize':
          return send({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'ws-script', version: '1' } } })
        case 'notifications/initialized':
          return send({ jsonrpc: '2.0', id: 'srv-1', method: 'ping' })
        case 'tools/list':
          return message.params?.cursor === undefined
            ? send({ jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'a', inputSchema: { type: 'object' } }], nextCursor: 'page-2' } })
            : send({ jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'b', inputSchema: { type: 'object' } }] } })
        case 'tools/call':
          send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: (message.params?._meta as { progressToken?: number } | undefined)?.progressToken, progress: 1, total: 1 } })
          send({ jsonrpc: '2.0', id: 'srv-2', method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } })
          return void socket.once('message', (answer) => {
            const sampled = JSON.parse(answer.toString()) as { result: { content: { text: string } } }
            send({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: `sampled ${sampled.result.content.text}` }] } })
          })
        case 'ping':
          return send({ jsonrpc: '2.0', id: message.id, result: {} })
      }
    })
  })
  return peer
}

t.test('initialize, paginated tools/list, a server ping, progress and sampling over one socket', async (t) => {
  const peer = await scriptedServer(t)
  const client = new McpClient(new WebSocketTransport({ url: peer.url, authorization: 'Bearer ws-token' }))
  t.teardown(() => client.close())
  await client.initialize({ sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm' }) })
  t.same(peer.handshake, { protocol: 'mcp', authorization: 'Bearer ws-token' }, 'subprotocol mcp and the authorization header')
  t.match(client.serverInfo, { name: 'ws-script' })
  t.same((await client.listTools()).map((tool) => tool.name), ['a', 'b'], 'two pages')
  await eventually(() => peer.frames.some((frame) => (frame as { id?: string }).id === 'srv-1'))
  t.same(peer.frames.find((frame) => (frame as { id?: string }).id === 'srv-1'), { jsonrpc: '2.0', id: 'srv-1', result: {} }, 'the client answered the server ping')
  const progress: number[] = []
  t.equal(text(await client.callTool('x', {}, { onProgress: (value) => void progress.push(value) })), 'sampled hello')
  t.same(progress, [1])
  await client.ping()
  t.same(peer.frames.map((frame) => (frame as { method?: string }).method ?? 'response').filter((method) => method !== 'response'),
    ['initialize', 'notifications/initialized', 'tools/list', 'tools/list', 'tools/call', 'ping'], 'one message per frame, in order')
  await client.close()
  await eventually(() => peer.closeCodes.length === 1)
  t.same(peer.closeCodes, [1000], 'a normal closure')
})

t.test('a binary frame closes the connection with 1003 and fails what is pending', async (t) => {
  const peer = await scriptedServer(t)
  const errors: Error[] = []
  let closed = 0
  const client = new McpClient(new WebSocketTransport({ url: peer.url }))
  t.teardown(() => client.close())
  await client.initialize({ on: { error: (error) => errors.push(error), close: () => closed++ } })
  const pending = client.listPrompts() // the script never answers it
  peer.socket().send(Buffer.from([1, 2, 3]), { binary: true })
  const failed = await pending.catch((error: unknown) => error)
  t.type(failed, TransportError)
  await eventually(() => peer.closeCodes.length === 1)
  t.same(peer.closeCodes, [1003])
  t.type(errors[0], ProtocolError)
  t.equal(closed, 1, 'the close handler ran once')
  await t.rejects(client.ping(), TransportError)
})

t.test('a server that does not pick the mcp subprotocol, or is not there, is a TransportError', async (t) => {
  const peer = await scriptedServer(t, false)
  const refused = await new McpClient(new WebSocketTransport({ url: peer.url })).initialize().catch((error: unknown) => error)
  t.type(refused, TransportError)
  t.match(refused, { message: /subprotocol/ })
  const nobody = await new McpClient(new WebSocketTransport({ url: 'ws://127.0.0.1:1/mcp' })).initialize().catch((error: unknown) => error)
  t.type(nobody, TransportError)
  t.match(nobody, { message: /ECONNREFUSED/ })
})

t.test("against the gateway's own WebSocket endpoint: progress, sampling, roots, subscriptions, cancellation", async (t) => {
  const gateway = await gatewayWith(t, [{ ...liveRoute, transports: ['streamable_http', 'websocket'] }])
  const client = new McpClient(new WebSocketTransport({ url: `${gateway.url.replace('http:', 'ws:')}/live` }))
  t.teardown(() => client.close())
  await client.initialize({ roots: [{ uri: 'file:///ws' }], sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'ws-model' }) })
  t.match(client.serverInfo, { name: 'live' })
  const progress: number[] = []
  t.equal(text(await client.callTool('slow', { steps: 3 }, { onProgress: (value) => void progress.push(value) })), 'done after 3 steps')
  t.same(progress, [1, 2, 3])
  t.equal(text(await client.callTool('sample', { prompt: 'x' })), 'model ws-model said: hi')
  t.equal(text(await client.callTool('roots')), 'file:///ws')
  const updates: string[] = []
  await client.subscribeResource('live://counter', (uri) => updates.push(uri))
  await client.callTool('touch')
  await eventually(() => updates.length === 1)
  await t.rejects(client.callTool('slow', { steps: 50 }, { onProgress: (value) => value < 2 }), CancelledError)
  await client.ping()
})
