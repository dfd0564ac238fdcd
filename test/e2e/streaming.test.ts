// Streaming and server→client features end to end, with the official SDK 1.x client.
import t from 'tap'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { observed } from './fixtures/live.ts'
import { connect, fixture, gatewayWith } from './harness.ts'
import { eventually } from '../fixtures/waiting.ts'
import { abandonSlow } from './live-calls.ts'

const route = { location: '/live', handler: fixture('live'), server: { name: 'live', version: '1.0.0' } }
const everything = { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } }
const text = (result: { [key: string]: unknown }) => (result.content as { text: string }[])[0]!.text


t.test('progress notifications arrive before the result, with the request token', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/live`)
  const seen: { progress: number; total?: number; message?: string }[] = []
  const result = await client.callTool({ name: 'slow', arguments: { steps: 3 } }, undefined, { onprogress: (p) => seen.push(p) })
  t.equal(text(result), 'done after 3 steps')
  t.same(seen, [
    { progress: 1, total: 3, message: 'step 1' },
    { progress: 2, total: 3, message: 'step 2' },
    { progress: 3, total: 3, message: 'step 3' },
  ])
})

t.test('cancellation: the handler sees signal.aborted and no response arrives', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/live`)
  await abandonSlow(t, client)
  await eventually(() => observed.aborted)
  t.equal(observed.completed, false, 'the handler stopped')
  t.same(await client.ping(), {}, 'the session goes on')
})

t.test('logging: setLevel filters notifications/message', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const messages: string[] = []
  const client = await connect(t, `${gateway.url}/live`, {}, (c) =>
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { messages.push(`${n.params.level}:${n.params.logger}`) }))
  await client.callTool({ name: 'levels' })
  t.same(messages, ['debug:levels', 'info:levels', 'warning:levels', 'error:levels'], 'no level set: everything')
  messages.length = 0
  await client.setLoggingLevel('warning')
  await client.callTool({ name: 'levels' })
  t.same(messages, ['warning:levels', 'error:levels'])
  await t.rejects(client.request({ method: 'logging/setLevel', params: { level: 'loud' } }, LoggingMessageNotificationSchema.shape.params), { code: -32602 })
})

t.test('sampling, elicitation (form and URL), roots and ping reach the client and come back', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const completed: string[] = []
  const client = await connect(t, `${gateway.url}/live`, everything, (c) => {
    c.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      role: 'assistant',
      model: 'test-model',
      content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` },
    }))
    c.setRequestHandler(ElicitRequestSchema, async (request) =>
      request.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Grace' } })
    c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///a', name: 'a' }, { uri: 'file:///b' }] }))
    c.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => { completed.push(n.params.elicitationId) })
  })
  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })), 'model test-model said: echo hi')
  t.equal(text(await client.callTool({ name: 'ask' })), 'Hello, Grace')
  t.equal(text(await client.callTool({ name: 'ask_url' })), 'url elicitation: accept')
  t.same(completed, ['login-1'])
  t.equal(text(await client.callTool({ name: 'roots' })), 'file:///a,file:///b')
  t.equal(text(await client.callTool({ name: 'ping_client' })), 'pong')
})

t.test('a server request to a client without the capability is a clear error to the handler', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/live`)
  const result = await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })
  t.equal(result.isError, true)
  t.match(text(result), /sampling capability/)
  const roots = await client.callTool({ name: 'roots' })
  t.match(text(roots), /roots capability/)
})

t.test('a server request the client does not answer times out', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/live`, everything, (c) => {
    c.setRequestHandler(ElicitRequestSchema, () => new Promise(() => undefined))
  })
  const result = await client.callTool({ name: 'impatient' })
  t.match(text(result), /timed out: The client did not answer elicitation\/create within 150 ms/)
})

t.test('subscribe, then resourceUpdated reaches the GET stream; unsubscribe stops it', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const updates: string[] = []
  const client = await connect(t, `${gateway.url}/live`, {}, (c) =>
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri) }))
  const other = await connect(t, `${gateway.url}/live`)
  await eventually(() => gateway.endpoints.get('/live')!.live.get(
    (client as unknown as { _transport: { sessionId: string } })._transport.sessionId)?.outlet !== undefined)
  await client.subscribeResource({ uri: 'live://counter' })
  await other.callTool({ name: 'touch' })
  await eventually(() => updates.length === 1)
  t.same(updates, ['live://counter'])
  await client.unsubscribeResource({ uri: 'live://counter' })
  await other.callTool({ name: 'touch' })
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(updates, ['live://counter'], 'nothing after unsubscribe')
})

t.test('registering a tool at run time sends tools/list_changed', async (t) => {
  const gateway = await gatewayWith(t, [route])
  let changed = 0
  const client = await connect(t, `${gateway.url}/live`, {}, (c) =>
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++ }))
  await eventually(() => [...gateway.endpoints.get('/live')!.live.entries()].some(([, live]) => live.outlet !== undefined))
  const before = (await client.listTools()).tools.length
  await client.callTool({ name: 'grow' })
  await eventually(() => changed === 1)
  t.equal((await client.listTools()).tools.length, before + 1)
})

t.test('server.log reaches every session whose level lets it through', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const quiet: string[] = []
  const loud: string[] = []
  const a = await connect(t, `${gateway.url}/live`, {}, (c) =>
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { quiet.push(n.params.level) }))
  const b = await connect(t, `${gateway.url}/live`, {}, (c) =>
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { loud.push(n.params.level) }))
  await a.setLoggingLevel('error')
  await b.setLoggingLevel('debug')
  await eventually(() => [...gateway.endpoints.get('/live')!.live.entries()].filter(([, live]) => live.outlet !== undefined).length === 2)
  await a.callTool({ name: 'broadcast', arguments: { level: 'info' } })
  await eventually(() => loud.length === 1)
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(loud, ['info'])
  t.same(quiet, [], 'the error-level session does not get info')
})

t.test('route events and server requests outside any request (on the GET stream)', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const before = observed.initialized
  const client = await connect(t, `${gateway.url}/live`, everything, (c) => {
    c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///later' }] }))
  })
  await eventually(() => observed.initialized === before + 1)
  t.pass('the initialized event reached the handler')
  await eventually(() => [...gateway.endpoints.get('/live')!.live.entries()].some(([, live]) => live.outlet !== undefined))
  observed.backgroundRoots = ''
  t.equal(text(await client.callTool({ name: 'background_roots' })), 'started')
  await eventually(() => observed.backgroundRoots !== '')
  t.equal(observed.backgroundRoots, 'file:///later', 'the answer came back to the waiting background task')
})
