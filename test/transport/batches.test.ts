/**
 * JSON-RPC batches: served for sessions that negotiated 2025-03-26 (that revision has them), each
 * message answered as if POSTed alone, the responses in one JSON array; refused with a clear -32600
 * (MCP_EDGE_BATCH_REFUSED) for any other session, without a session, or over `limits.batch_size`.
 * Real HTTP on loopback.
 */
import t from 'tap'
import { socketGateway } from '../fixtures/transport-gateway.ts'

const OLD = '2025-03-26'
type Started = Awaited<ReturnType<typeof socketGateway>>

async function post(gateway: Started, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; type: string | null; body: string }> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() }
}

async function session(gateway: Started, version: string): Promise<Record<string, string>> {
  const init = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'batch', version: '1' } } }),
  })
  t.match(await init.json(), { result: { protocolVersion: version } })
  const headers = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': version }
  await post(gateway, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)
  return headers
}

t.test('a 2025-03-26 session batches: one answer per request, as if each were POSTed alone', async (t) => {
  const gateway = await socketGateway(t)
  const headers = await session(gateway, OLD)
  const answer = await post(gateway, [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'one' } } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nothing', reason: 'no such request' } },
    { jsonrpc: '2.0', id: 'two', method: 'ping' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'refuse' } },
    { jsonrpc: '2.0', id: 4, method: 'no/such/method' },
    { id: 5, method: 'ping' },
    { jsonrpc: '2.0', id: 6, method: 'initialize', params: { protocolVersion: OLD, capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
  ], headers)
  t.equal(answer.status, 200)
  t.match(answer.type, /^application\/json/)
  const responses = JSON.parse(answer.body) as Array<{ id: unknown; result?: { content?: unknown[]; isError?: boolean }; error?: { code: number; message: string } }>
  t.equal(responses.length, 6, 'six requests, six responses; no answer to the notification')
  const byId = new Map(responses.map((response) => [response.id, response]))
  t.same(byId.get(1)?.result?.content, [{ type: 'text', text: 'Tool echo: one' }])
  t.same(byId.get('two')?.result, {})
  t.equal(byId.get(3)?.result?.isError, true, 'a failing tool is a result, in the batch as alone')
  t.equal(byId.get(4)?.error?.code, -32601)
  t.match(byId.get(5)?.error, { code: -32600, message: /"jsonrpc" must be "2.0"/ }, 'an invalid member: its own -32600, with its id')
  t.match(byId.get(6)?.error, { code: -32600, message: /initialize cannot be part of a batch/ })

  const notifications = await post(gateway, [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'x' } }], headers)
  t.equal(notifications.status, 202, 'notifications only: 202, no body')
  t.equal(notifications.body, '')
  const empty = await post(gateway, [], headers)
  t.equal(empty.status, 400)
  t.match(JSON.parse(empty.body), { id: null, error: { code: -32600, message: /empty batch/ } })
})

t.test('batches are refused for a later revision, without a session, and over limits.batch_size', async (t) => {
  const gateway = await socketGateway(t, {}, { limits: { batch_size: 2 } })
  const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' })
  const later = await post(gateway, [ping(1)], await session(gateway, '2025-06-18'))
  t.equal(later.status, 400)
  t.match(JSON.parse(later.body), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'JSON-RPC batches are only for sessions that negotiated 2025-03-26; send one message per POST: this session negotiated 2025-06-18' } })
  const none = await post(gateway, [ping(1)])
  t.equal(none.status, 400)
  t.match(JSON.parse(none.body), { error: { code: -32600, message: /no session is named \(initialize cannot be batched\)$/ } })
  const old = await session(gateway, OLD)
  const many = await post(gateway, [ping(1), ping(2), ping(3)], old)
  t.equal(many.status, 400)
  t.match(JSON.parse(many.body), { error: { code: -32600, message: /3 messages are more than limits\.batch_size \(2\)$/ } })
  const two = await post(gateway, [ping(1), ping(2)], old)
  t.equal(two.status, 200, 'at the bound: served')
  const unknown = await post(gateway, [ping(1)], { ...old, 'mcp-session-id': 'no-such-session' })
  t.equal(unknown.status, 404, 'an unknown session: 404, as for one message')
})

t.test('a nested batch or a member that is no message is answered with -32600, on the hot path gateway and on Fastify (issue 26)', async (t) => {
  for (const [path, top] of [['hot path', {}], ['Fastify', { trust_proxy: true }]] as const) {
    const gateway = await socketGateway(t, {}, top)
    const headers = await session(gateway, OLD)
    for (const [what, body] of [
      ['[[…]]', [[{ jsonrpc: '2.0', id: 1, method: 'ping' }]]],
      ['[[]]', [[]]],
      ['[1]', [1]],
      ['a nested batch beside a notification', [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'x' } }]],
    ] as const) {
      const answer = await post(gateway, body, headers)
      t.equal(answer.status, 200, `${path}, ${what}: answered, not 202`)
      t.match(answer.type, /^application\/json/)
      t.match(JSON.parse(answer.body || 'null'), [{ jsonrpc: '2.0', id: null, error: { code: -32600 } }], `${path}, ${what}: one -32600 with id null`)
    }
  }
})
