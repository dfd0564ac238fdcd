/**
 * The downstream HTTP+SSE transport of 2024-11-05 (`transports: [..., sse]`) on `workers: 2` with the
 * cluster store, driven by the official SDK's `SSEClientTransport` through a forwarder that opens a
 * fresh connection per POST, so consecutive POSTs reach different workers while the stream stays on
 * one. Whatever a POST served on the other worker produces (the response, progress, a sampling or
 * elicitation request) crosses the store's bus to the stream; the client's answers and cancellations
 * POSTed to either worker reach the worker waiting for them. Then hostile POSTs.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import t, { type Test } from 'tap'
import { eventually } from '../fixtures/waiting.ts'
import { liveRoute, startGatewayProcess } from './gateway-process.ts'
import { roundRobin } from './round-robin.ts'

// A primary and two workers start slowly (each compiles its TypeScript): more than tap's 30 s, and on a
// loaded machine more than the start helper's default 30 s (seen at 45 s beside three other test files).
t.setTimeout(180_000)

const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)
const gateway = await startGatewayProcess(t, { workers: 2, body_limit: 65_536, routes: [{ ...liveRoute, transports: ['streamable_http', 'sse'] }] }, 2, 90_000)

async function connect(t: Test, url: string): Promise<{ client: Client; transport: SSEClientTransport; logs: string[] }> {
  const logs: string[] = []
  const client = new Client({ name: 'legacy-client', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } })
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: 'assistant',
    model: 'old-model',
    content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` },
  }))
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }))
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.level)))
  const transport = new SSEClientTransport(new URL(url))
  await client.connect(transport)
  t.teardown(() => client.close())
  return { client, transport, logs }
}

t.test('a session over the old transport, its POSTs alternating between the two workers', async (t) => {
  const balancer = await roundRobin(t, [gateway.url])
  const { client, transport, logs } = await connect(t, `${balancer.url}/live/sse`)
  const opened = await gateway.logged((line) => line.msg === 'HTTP+SSE stream opened')
  const streamPid = opened.pid as number
  const sessionId = opened.sessionId as string
  t.ok(sessionId.length > 0, 'the stream\'s worker logged the session')

  const pids: number[] = []
  for (let n = 0; n < 4; n++) pids.push((JSON.parse(text(await client.callTool({ name: 'whoami' }))) as { pid: number }).pid)
  t.equal(new Set(pids).size, 2, 'the calls were served by both workers')
  t.ok(pids.some((pid) => pid !== streamPid), 'calls served by the worker that does not hold the stream were answered on it')

  // Sampling and elicitation from either worker: the question crosses to the stream, the answer (a POST) to the asker.
  for (let n = 0; n < 2; n++) {
    t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: `hi ${n}` } })), `model old-model said: echo hi ${n}`, `sampling, round ${n}`)
    t.equal(text(await client.callTool({ name: 'ask' })), 'Hello, Grace', `elicitation, round ${n}`)
  }

  // What the stream carried, as it came (the SDK client handles notifications a microtask late, so its
  // onprogress misses a last progress that arrives with the response: the wire is what is asserted).
  const wire: string[] = []
  const deliver = transport.onmessage!
  transport.onmessage = (message) => {
    const m = message as { method?: string; params?: { progress?: number }; result?: unknown }
    if (m.method === 'notifications/progress') wire.push(`progress ${m.params?.progress}`)
    else if (m.result !== undefined) wire.push('result')
    deliver(message)
  }
  for (let n = 0; n < 2; n++) {
    wire.length = 0
    t.equal(text(await client.callTool({ name: 'slow', arguments: { steps: 3 } }, undefined, { onprogress: () => undefined })), 'done after 3 steps')
    t.same(wire, ['progress 1', 'progress 2', 'progress 3', 'result'], `round ${n}: progress reached the stream in order, before the response`)
  }
  transport.onmessage = deliver

  await client.callTool({ name: 'levels' })
  await eventually(() => logs.length >= 4)
  t.same(logs.slice(0, 4), ['debug', 'info', 'warning', 'error'], 'the tool\'s log messages reached the stream')

  // Cancellation: notifications/cancelled is a POST of its own; the worker running `slow` stops.
  const controller = new AbortController()
  const call = client.callTool({ name: 'slow', arguments: { steps: 100 } }, undefined, { signal: controller.signal, onprogress: () => undefined })
  await new Promise((resolve) => setTimeout(resolve, 300))
  controller.abort('enough')
  await t.rejects(call, 'the client gave up')
  await eventually(async () => {
    const seen = await Promise.all([0, 1].map(async () => JSON.parse(text(await client.callTool({ name: 'whoami' }))) as { observed: { aborted: boolean; completed: boolean } }))
    return seen.some((w) => w.observed.aborted && !w.observed.completed)
  }, 5000)
  t.pass('the worker running `slow` saw the cancellation')

  // The stream closes: the session ends on every worker.
  await transport.close()
  await eventually(async () => {
    const statuses = await Promise.all([0, 1].map(async () => (await fetch(`${balancer.url}/live/messages?sessionId=${sessionId}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }),
    })).status))
    return statuses.every((status) => status === 404)
  }, 5000)
  t.pass('after the stream closed, a POST on its session is 404 on both workers')
})

t.test('hostile POSTs: an unknown session, no session, an oversize body, a request before initialize', async (t) => {
  const post = (query: string, body: string): Promise<Response> =>
    fetch(`${gateway.url}/live/messages${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  const unknown = await post('?sessionId=00000000-0000-4000-8000-000000000000', JSON.stringify({ jsonrpc: '2.0', id: 'u1', method: 'tools/list' }))
  t.equal(unknown.status, 404, 'an unknown session is 404')
  t.match(await unknown.json(), { jsonrpc: '2.0', id: 'u1', error: { code: -32001 } }, 'with a JSON-RPC error carrying the request\'s id')

  const none = await post('', JSON.stringify({ jsonrpc: '2.0', id: 'n1', method: 'tools/list' }))
  t.equal(none.status, 400, 'no session id is 400')
  t.match(await none.json(), { id: 'n1', error: { message: /sessionId/ } })

  const big = await post('?sessionId=x', JSON.stringify({ jsonrpc: '2.0', id: 'b1', method: 'tools/call', params: { name: 'whoami', arguments: { pad: 'x'.repeat(100_000) } } }))
  t.equal(big.status, 413, 'a body over body_limit is 413')
  t.match(await big.json(), { jsonrpc: '2.0', error: { code: -32000 } })

  // A stream opened by hand: its reserved session takes initialize first, nothing else.
  const controller = new AbortController()
  t.teardown(() => controller.abort())
  const stream = await fetch(`${gateway.url}/live/sse`, { headers: { accept: 'text/event-stream' }, signal: controller.signal })
  t.equal(stream.status, 200)
  const reader = stream.body!.getReader()
  let head = ''
  while (!head.includes('\n\n')) head += new TextDecoder().decode((await reader.read()).value)
  const endpoint = /event: endpoint\ndata: (\S+)/.exec(head)?.[1]
  t.match(endpoint, /^\/live\/messages\?sessionId=[0-9a-f-]{36}$/, 'the endpoint event names the POST URL and the session')
  const early = await fetch(`${gateway.url}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 'e1', method: 'tools/list' }) })
  t.equal(early.status, 400, 'a request before initialize is refused')
  t.match(await early.json(), { id: 'e1', error: { code: -32600 } })
  const garbage = await fetch(`${gateway.url}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc": "2.0", "id": ' })
  t.equal(garbage.status, 400, 'malformed JSON is 400')
})
