// A Redis that hangs (CLIENT PAUSE: commands wait, nothing fails fast): every request that needs the
// store gets 503 with -32000 and its own id, on HTTP and WebSocket alike, and no body names the backend.
import { Redis } from 'ioredis'
import t from 'tap'
import WebSocket from 'ws'
import { startRedis } from '../store/redis-server.ts'
import { CLIENT_HEADERS, initializeRequest, socketGateway } from '../fixtures/transport-gateway.ts'

const BACKEND_WORDS = /redis|timed out|command|ECONN|ioredis/i

t.test('store writes and reads while Redis hangs: 503, -32000, the request id, no backend text', async (t) => {
  const redis = await startRedis(t)
  const gateway = await socketGateway(t, { transports: ['streamable_http', 'websocket'] }, {
    store: { type: 'redis', url: redis.url, command_timeout: 0.3, connect_timeout: 1 },
  })
  const url = `${gateway.url}/mcp`
  const post = (body: object, sessionId?: string) =>
    fetch(url, { method: 'POST', headers: { ...CLIENT_HEADERS, ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }) }, body: JSON.stringify(body) })
  const init = await post(initializeRequest())
  const sessionId = init.headers.get('mcp-session-id')!
  await init.text()
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).text()
  // A WebSocket session opened before the outage.
  const ws = new WebSocket(url.replace('http', 'ws'), 'mcp')
  const wsMessages: Array<Record<string, unknown>> = []
  ws.on('message', (data) => wsMessages.push(JSON.parse(data.toString()) as Record<string, unknown>))
  await new Promise((resolve) => ws.once('open', resolve))
  ws.send(JSON.stringify(initializeRequest('ws-init')))
  while (wsMessages.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  t.teardown(() => ws.terminate())

  const admin = new Redis(redis.url)
  t.teardown(() => admin.disconnect())
  await admin.call('CLIENT', 'PAUSE', '4000', 'ALL')

  const subscribe = await post({ jsonrpc: '2.0', id: 'sub-1', method: 'resources/subscribe', params: { uri: 'test://broken' } }, sessionId)
  const subscribeBody = await subscribe.text()
  t.equal(subscribe.status, 503, 'resources/subscribe: HTTP 503')
  t.match(JSON.parse(subscribeBody), { jsonrpc: '2.0', id: 'sub-1', error: { code: -32000 } }, 'resources/subscribe: -32000 with its id')
  t.notMatch(subscribeBody, BACKEND_WORDS, `resources/subscribe: no backend internals (${subscribeBody})`)

  const initialize = await post(initializeRequest('init-2'))
  const initializeBody = await initialize.text()
  t.equal(initialize.status, 503, 'initialize: HTTP 503')
  t.match(JSON.parse(initializeBody), { id: 'init-2', error: { code: -32000 } }, 'initialize: -32000 with its id')
  t.notMatch(initializeBody, BACKEND_WORDS, `initialize: no backend internals (${initializeBody})`)

  const ws2 = new WebSocket(url.replace('http', 'ws'), 'mcp')
  t.teardown(() => ws2.terminate())
  const ws2Message = new Promise<string>((resolve) => ws2.once('message', (data) => resolve(data.toString())))
  await new Promise((resolve) => ws2.once('open', resolve))
  ws2.send(JSON.stringify(initializeRequest('ws-init-2')))
  const ws2Body = await ws2Message
  t.match(JSON.parse(ws2Body), { id: 'ws-init-2', error: { code: -32000 } }, 'WebSocket initialize: -32000 with its id')
  t.notMatch(ws2Body, BACKEND_WORDS, `WebSocket initialize: no backend internals (${ws2Body})`)

  const before = wsMessages.length
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'ws-sub', method: 'resources/subscribe', params: { uri: 'test://broken' } }))
  while (wsMessages.length === before) await new Promise((resolve) => setTimeout(resolve, 10))
  const wsAnswer = wsMessages.at(-1)!
  t.match(wsAnswer, { id: 'ws-sub', error: { code: -32000 } }, 'WebSocket resources/subscribe: -32000 with its id')
  t.notMatch(JSON.stringify(wsAnswer), BACKEND_WORDS, 'WebSocket: no backend internals')
  await admin.call('CLIENT', 'UNPAUSE')
})
