/**
 * The client's answers to server→client requests are checked before a handler sees them (sampling's
 * result shape, an elicitation's action and content against its requestedSchema, roots), with a typed
 * error the handler can catch; the roots are cached until the client says they changed, on every
 * worker; `ctx.session.log` and `ctx.session.shutdown` work outside a request, from any worker; and
 * `waitBackgroundTasks` says whether it timed out. Real HTTP on loopback, two gateways sharing one
 * store as two workers do, and mcp-edge's own client (it answers whatever a test tells it to).
 */
import t, { type Test } from 'tap'
import { McpClient, StreamableHttpTransport } from '../../gateway/client/index.ts'
import type { LogMessage } from '../../gateway/client/types.ts'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import type { JsonObject } from '../../gateway/wire/mcp-types.ts'
import { eventually } from '../fixtures/waiting.ts'

const HANDLER = new URL('./fixtures/answers.ts', import.meta.url).pathname
type Started = Gateway & { url: string }

/** Two gateways on one store: two workers of one route, either serving any request. */
async function twoWorkers(t: Test): Promise<[Started, Started]> {
  const store = new MemoryStore({ eventCapacity: 64, cacheTtl: 60 })
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    routes: [{ location: '/answers', handler: HANDLER, server: { name: 'answers', version: '1' } }],
  }, '<test>')
  const a = await startGateway(config, { store })
  const b = await startGateway(config, { store })
  t.teardown(async () => {
    await a.close()
    await b.close()
    await store.close()
  })
  return [a, b]
}

async function client(t: Test, gateway: Started, options: Parameters<McpClient['initialize']>[0] = {}): Promise<McpClient> {
  const mcp = new McpClient(new StreamableHttpTransport({ url: `${gateway.url}/answers` }))
  await mcp.initialize(options)
  t.teardown(() => mcp.close().catch(() => undefined))
  return mcp
}

const text = async (mcp: McpClient, name: string, args?: JsonObject): Promise<string> =>
  ((await mcp.callTool(name, args)).content[0] as { text: string }).text

/** A request of `sessionId` sent to `gateway` by hand (the other worker than the client's). */
async function postTo(gateway: Started, sessionId: string, message: JsonObject): Promise<Response> {
  return fetch(`${gateway.url}/answers`, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  })
}

const INVALID = (method: string) => new RegExp(`^invalid answer to ${method.replace('/', '\\/')} \\(MCP_EDGE_CLIENT_ANSWER_INVALID\\): The client's answer to ${method.replace('/', '\\/')} is malformed: `)

t.test('sampling: a well-formed result reaches the handler, a malformed one is a typed error naming the problem', async (t) => {
  const [a] = await twoWorkers(t)
  const answers: unknown[] = []
  const mcp = await client(t, a, { sampling: () => 'declares the capability' })
  // The raw handler: the built-in one fills in a missing role and model.
  mcp.onRequest('sampling/createMessage', () => answers.shift() as JsonObject)
  answers.push({ role: 'assistant', model: 'm1', content: { type: 'text', text: 'hello' } })
  t.equal(await text(mcp, 'sample'), 'model m1: hello')
  const malformed: Array<[unknown, RegExp]> = [
    [{ role: 'assistant', content: { type: 'text', text: 'x' } }, /model must be a string$/],
    [{ role: 'robot', model: 'm', content: { type: 'text', text: 'x' } }, /role must be "user" or "assistant" \(got "robot"\)$/],
    [{ role: 'assistant', model: 'm', content: { type: 'text' } }, /content of type text needs a string "text"$/],
    [{ role: 'assistant', model: 'm', content: [{ type: 'image', data: 'AA==' }] }, /content\[0\] of type image needs string "data" and "mimeType"$/],
    [{ role: 'assistant', model: 'm', content: { type: 'video' } }, /content has an unknown type "video"$/],
  ]
  for (const [answer, problem] of malformed) {
    answers.push(answer)
    const said = await text(mcp, 'sample')
    t.match(said, INVALID('sampling/createMessage'), JSON.stringify(answer))
    t.match(said, problem)
  }
})

t.test('elicitation: action and content are checked against the requestedSchema', async (t) => {
  const [a] = await twoWorkers(t)
  const answers: unknown[] = []
  const mcp = await client(t, a, { elicitation: () => undefined })
  mcp.onRequest('elicitation/create', () => answers.shift() as JsonObject)
  answers.push({ action: 'accept', content: { name: 'Ada', age: 36 } }, { action: 'decline' }, { action: 'cancel' })
  t.equal(await text(mcp, 'ask'), '{"action":"accept","content":{"name":"Ada","age":36}}')
  t.equal(await text(mcp, 'ask'), '{"action":"decline"}')
  t.equal(await text(mcp, 'ask'), '{"action":"cancel"}')
  const malformed: Array<[unknown, RegExp]> = [
    [{ action: 'accept', content: { age: 3 } }, /content does not match the requested schema: must have required property 'name'$/],
    [{ action: 'accept', content: { name: 'Ada', age: 'old' } }, /content does not match the requested schema: \/age must be integer$/],
    [{ action: 'accept', content: { name: '' } }, /\/name must NOT have fewer than 1 characters$/],
    [{ action: 'accept', content: ['Ada'] }, /content must be an object$/],
    [{ action: 'maybe' }, /action must be "accept", "decline" or "cancel" \(got "maybe"\)$/],
  ]
  for (const [answer, problem] of malformed) {
    answers.push(answer)
    const said = await text(mcp, 'ask')
    t.match(said, INVALID('elicitation/create'), JSON.stringify(answer))
    t.match(said, problem)
  }
})

t.test('roots: malformed lists are typed errors; uncaught, the tool answers isError in those words', async (t) => {
  const [a] = await twoWorkers(t)
  const mcp = await client(t, a, { roots: [] })
  const answers: unknown[] = [{ roots: 'all of them' }, { roots: [{ uri: 'https://example.com' }] }, { roots: [{ uri: 'file:///a', name: 7 }] }, { roots: [{ name: 'x' }] }]
  mcp.onRequest('roots/list', () => answers.shift() as JsonObject)
  t.match(await text(mcp, 'roots'), /is malformed: the result has no "roots" list$/)
  t.match(await text(mcp, 'roots'), /is malformed: roots\[0\]\.uri must be a file:\/\/ URI \(got "https:\/\/example.com"\)$/)
  t.match(await text(mcp, 'roots'), /is malformed: roots\[0\]\.name must be a string$/)
  const uncaught = await mcp.callTool('roots_uncaught')
  t.equal(uncaught.isError, true)
  t.match((uncaught.content[0] as { text: string }).text, /The client's answer to roots\/list is malformed: roots\[0\]\.uri must be a string/)
})

t.test('roots are cached per session until roots/list_changed, which clears them on every worker', async (t) => {
  const [a, b] = await twoWorkers(t)
  let asked = 0
  const mcp = await client(t, a, { roots: [{ uri: 'file:///one' }] })
  const sessionId = (mcp.transport as StreamableHttpTransport).sessionId!
  mcp.onRequest('roots/list', () => {
    asked++
    return { roots: [{ uri: `file:///v${asked}` }] }
  })
  t.equal(await text(mcp, 'roots'), 'file:///v1')
  t.equal(await text(mcp, 'roots'), 'file:///v1', 'the second call is served from the cache')
  t.equal(asked, 1, 'the client was asked once')
  await mcp.exposeRoots([{ uri: 'file:///two' }])
  await eventually(async () => (await text(mcp, 'roots')) === 'file:///v2')
  t.equal(asked, 2, 'asked again after list_changed')
  // The change announced to worker b clears what worker a keeps.
  const changed = await postTo(b, sessionId, { method: 'notifications/roots/list_changed' })
  t.equal(changed.status, 202)
  await eventually(async () => (await text(mcp, 'roots')) === 'file:///v3')
  t.equal(asked, 3)

  // A client that cannot announce changes is asked every time.
  const plain = await client(t, a, { capabilities: { roots: {} } })
  let plainAsked = 0
  plain.onRequest('roots/list', () => ({ roots: [{ uri: `file:///p${++plainAsked}` }] }))
  t.equal(await text(plain, 'roots'), 'file:///p1')
  t.equal(await text(plain, 'roots'), 'file:///p2', 'no cache without roots.listChanged')
})

t.test('ctx.session.log outside a request reaches the session stream, filtered by its level', async (t) => {
  const [a] = await twoWorkers(t)
  const logs: LogMessage[] = []
  const mcp = await client(t, a, { on: { log: (message) => logs.push(message) } })
  await mcp.setLogLevel('info')
  t.equal(await text(mcp, 'log_later'), 'scheduled')
  await eventually(() => logs.length === 1)
  t.same(logs, [{ level: 'warning', logger: 'background', data: { later: true } }])
  await mcp.setLogLevel('error')
  t.equal(await text(mcp, 'log_later'), 'scheduled')
  await new Promise((resolve) => setTimeout(resolve, 150))
  t.equal(logs.length, 1, 'a warning does not pass the level "error"')
})

t.test('ctx.session.shutdown ends the session from another worker: the stream worker lets go, the next request is 404', async (t) => {
  const [a, b] = await twoWorkers(t)
  const mcp = await client(t, a)
  const sessionId = (mcp.transport as StreamableHttpTransport).sessionId!
  await eventually(() => a.endpoints.get('/answers')!.live.get(sessionId)?.outlet !== undefined)
  const answered = await postTo(b, sessionId, { id: 1, method: 'tools/call', params: { name: 'end_session' } })
  t.match(await answered.text(), /ending/, 'worker b answered the call first')
  await eventually(async () => (await a.store.get(sessionId)) === undefined)
  await eventually(() => a.endpoints.get('/answers')!.live.get(sessionId) === undefined)
  t.pass('worker a let go of the session stream')
  const after = await postTo(a, sessionId, { id: 2, method: 'ping' })
  t.equal(after.status, 404, 'the next request: 404, initialize again')
})

t.test('waitBackgroundTasks says whether the tasks settled or the timeout came first', async (t) => {
  const [a] = await twoWorkers(t)
  const mcp = await client(t, a)
  t.equal(await text(mcp, 'wait_background', { taskMs: 300, timeoutMs: 20 }), 'timed out')
  t.equal(await text(mcp, 'wait_background', { taskMs: 10 }), 'settled')
  t.equal(await text(mcp, 'wait_background', { taskMs: 10, timeoutMs: 2000 }), 'settled')
})
