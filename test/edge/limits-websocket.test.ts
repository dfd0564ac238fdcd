// Rate limits and quotas on the WebSocket transport: the same rules and counters as on HTTP, counted
// per message and answered in JSON-RPC alone (a socket has no status line): a refused request gets an
// error with its id and `data.retryAfterMs`, a tool over its limit an isError result, and the
// connection stays open.
import t, { type Test } from 'tap'
import { WebSocket } from 'ws'
import { gatewayWith } from '../e2e/harness.ts'
import { limitRoutes, session } from './limits-scenarios.ts'

t.setTimeout(60_000)

const routes = limitRoutes.map((route) => ({ ...route, transports: ['streamable_http', 'websocket'] }))
const gateway = await gatewayWith(t, routes)
const wsUrl = (path: string) => `${gateway.url.replace(/^http/, 'ws')}${path}`

interface Raw {
  send(message: object): void
  /** The server's answer to request `id`. */
  answer(id: number | string): Promise<Record<string, any>>
  closed: boolean
}

/** A raw client on `path`, initialized; closed at teardown. */
async function open(t: Test, path: string): Promise<Raw & { initialized: Record<string, any> }> {
  const ws = new WebSocket(wsUrl(path), 'mcp')
  t.teardown(() => ws.terminate())
  const answers = new Map<string, Record<string, any>>()
  const waiting = new Map<string, (message: Record<string, any>) => void>()
  let closed = false
  ws.on('close', () => (closed = true))
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Record<string, any>
    if (message.id === undefined || 'method' in message) return
    const key = String(message.id)
    const waiter = waiting.get(key)
    if (waiter !== undefined) waiter(message)
    else answers.set(key, message)
  })
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  const raw: Raw = {
    send: (message) => ws.send(JSON.stringify(message)),
    answer: (id) => {
      const key = String(id)
      const ready = answers.get(key)
      if (ready !== undefined) return Promise.resolve(ready)
      return new Promise((resolve) => waiting.set(key, resolve))
    },
    get closed() {
      return closed
    },
  }
  raw.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws-limits', version: '1' } } })
  const initialized = await raw.answer('init')
  if (initialized.result !== undefined) raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  return Object.assign(raw, { initialized })
}

const call = (id: number, name: string, args: object = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

t.test('a transport rule: the messages over it get -32000 with their id and the wait; the socket stays open', async (t) => {
  const client = await open(t, '/rate') // the initialize is 1 of 5
  const answers = []
  for (let id = 1; id <= 6; id++) {
    client.send(call(id, 'whoami'))
    answers.push(await client.answer(id))
  }
  t.same(answers.map((answer) => answer.error === undefined), [true, true, true, true, false, false], 'exactly 5 messages pass in the window')
  t.match(answers[4], { id: 5, error: { code: -32000, message: /Too Many Requests: over 5 requests per client address per 60 s/, data: { retryAfterMs: Number, limit: 5 } } })
  t.notOk(client.closed, 'the connection is still open')
})

t.test('a tool over its rule gets an isError result the model can act on', async (t) => {
  const client = await open(t, '/tool')
  const results = []
  for (let id = 1; id <= 4; id++) {
    client.send(call(id, 'whoami'))
    results.push((await client.answer(id)).result)
  }
  t.same(results.map((result) => result.isError ?? false), [false, false, false, true])
  t.match(results[3], { structuredContent: { retryAfterMs: Number, limit: 3 }, content: [{ text: /Rate limit reached/ }] })
})

t.test('concurrent_requests_per_session: 2 in flight, a third is refused with its id, later ones pass', async (t) => {
  const client = await open(t, '/quota')
  client.send(call(1, 'slow', { steps: 25 }))
  client.send(call(2, 'slow', { steps: 25 }))
  client.send(call(3, 'slow', { steps: 25 }))
  t.match(await client.answer(3), { id: 3, error: { code: -32000, message: /already has 2 requests in flight.*concurrent_requests_per_session/, data: { limit: 2 } } })
  const done = await Promise.all([client.answer(1), client.answer(2)])
  t.same(done.map((answer) => JSON.stringify(answer.result).includes('done after 25 steps')), [true, true], 'the two in flight finish')
  client.send(call(4, 'whoami'))
  t.notOk((await client.answer(4)).error, 'their slots were given back')
})

t.test('sessions_per_principal counts WebSocket sessions with HTTP ones; one too many is refused and not kept', async (t) => {
  const http = await session(`${gateway.url}/quota`)
  const first = await open(t, '/quota')
  t.ok(first.initialized.result, 'two sessions: one over HTTP, one over a socket')
  const third = await open(t, '/quota')
  t.match(third.initialized, { id: 'init', error: { code: -32000, message: /already has 2 sessions.*sessions_per_principal/ } })
  third.send(call(1, 'whoami'))
  t.match(await third.answer(1), { id: 1, error: { code: -32600, message: /first request must be initialize/ } }, 'the refused session does not exist')
  const ended = await fetch(`${gateway.url}/quota`, { method: 'DELETE', headers: { 'mcp-session-id': http, 'mcp-protocol-version': '2025-11-25' } })
  t.equal(ended.status, 200)
  const fourth = await open(t, '/quota')
  t.ok(fourth.initialized.result, 'one ended: a new socket session is admitted')
})
