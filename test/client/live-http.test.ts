// The streaming and server→client side of the client against this project's gateway over
// Streamable HTTP: progress and cancellation, timeouts, logs, sampling, elicitation, roots, ping,
// subscriptions, list_changed, and what happens when the session or the server is gone.
import t from 'tap'
import { CancelledError, TimeoutError, TransportError, type LogMessage } from '../../gateway/client/index.ts'
import { observed } from '../e2e/fixtures/live.ts'
import { eventually, gatewayWith, httpClient, liveRoute, recordingFetch, text } from './harness.ts'

t.test('a progress callback sees every step; returning false cancels the request on the server', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const client = await httpClient(t, `${gateway.url}/live`)
  const seen: [number, number | undefined, string | undefined][] = []
  const done = await client.callTool('slow', { steps: 3 }, { onProgress: (progress, total, message) => void seen.push([progress, total, message]) })
  t.equal(text(done), 'done after 3 steps')
  t.same(seen, [[1, 3, 'step 1'], [2, 3, 'step 2'], [3, 3, 'step 3']])

  const cancelled = await client.callTool('slow', { steps: 50 }, { onProgress: (progress) => progress < 2 }).catch((error: unknown) => error)
  t.type(cancelled, CancelledError)
  t.match(cancelled, { reason: 'cancelled by the progress callback', code: 'MCP_EDGE_CLIENT_CANCELLED' })
  await eventually(() => observed.aborted)
  t.equal(observed.completed, false, 'the handler stopped')
  await client.ping()
  t.pass('the session goes on')
})

t.test('an aborted signal cancels; a short timeout is a TimeoutError and cancels on the server too', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const client = await httpClient(t, `${gateway.url}/live`)
  const controller = new AbortController()
  const call = client.callTool('slow', { steps: 50 }, { signal: controller.signal, onProgress: (progress) => { if (progress === 2) controller.abort('enough') } })
  const aborted = await call.catch((error: unknown) => error)
  t.type(aborted, CancelledError)
  t.match(aborted, { reason: 'enough' })
  await eventually(() => observed.aborted)

  observed.aborted = false
  const timedOut = await client.callTool('slow', { steps: 5 }, { timeoutMs: 60 }).catch((error: unknown) => error)
  t.type(timedOut, TimeoutError)
  t.match(timedOut, { timeoutMs: 60, code: 'MCP_EDGE_CLIENT_TIMEOUT' })
  await eventually(() => observed.aborted)
  t.equal(observed.completed, false, 'the server was told to stop')
  await t.rejects(client.callTool('slow', { steps: 1 }, { signal: AbortSignal.abort('never started') }), CancelledError)
})

t.test('log messages reach the handler, filtered by setLogLevel', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const logs: LogMessage[] = []
  const client = await httpClient(t, `${gateway.url}/live`, { on: { log: (message) => logs.push(message) } })
  await client.callTool('levels')
  t.same(logs.map((log) => `${log.level}:${log.logger}:${String(log.data)}`), [
    'debug:levels:a debug message', 'info:levels:a info message', 'warning:levels:a warning message', 'error:levels:a error message',
  ])
  logs.length = 0
  await client.setLogLevel('warning')
  await client.callTool('levels')
  t.same(logs.map((log) => log.level), ['warning', 'error'])
})

t.test('sampling, elicitation (form and URL), roots and ping are answered by the callbacks', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const completed: string[] = []
  const client = await httpClient(t, `${gateway.url}/live`, {
    roots: [{ uri: 'file:///a', name: 'a' }, { uri: 'file:///b' }],
    sampling: (params) => {
      t.match(params, { maxTokens: 50, systemPrompt: 'be brief', messages: [{ role: 'user', content: { type: 'text', text: 'say hi' } }] })
      return { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'tiny' }
    },
    elicitation: (params) => {
      if (params.mode === 'url') {
        t.match(params, { url: 'https://example.com/login', elicitationId: 'login-1' })
        return { action: 'accept' }
      }
      t.equal(params.message, 'What is your name?')
      t.match(params.requestedSchema, { properties: { name: { type: 'string' } } })
      return { action: 'accept', content: { name: 'Grace' } }
    },
    elicitationModes: ['form', 'url'],
    on: { elicitationComplete: (id) => completed.push(id) },
  })
  t.equal(text(await client.callTool('sample', { prompt: 'say hi' })), 'model tiny said: hi')
  t.equal(text(await client.callTool('ask')), 'Hello, Grace')
  t.equal(text(await client.callTool('ask_url')), 'url elicitation: accept')
  await eventually(() => completed.length === 1)
  t.same(completed, ['login-1'], 'notifications/elicitation/complete')
  t.equal(text(await client.callTool('roots')), 'file:///a,file:///b')
  await client.exposeRoots([{ uri: 'file:///c' }])
  t.equal(text(await client.callTool('roots')), 'file:///c', 'exposeRoots changes what roots/list answers')
  t.equal(text(await client.callTool('ping_client')), 'pong')
})

t.test('a callback that throws answers the server with an error; a missing one is not declared', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const client = await httpClient(t, `${gateway.url}/live`, {
    elicitation: () => { throw new Error('no user here') },
  })
  const asked = await client.callTool('ask')
  t.equal(asked.isError, true)
  t.match(text(asked), /no user here/)
  const sampled = await client.callTool('sample', { prompt: 'x' })
  t.equal(sampled.isError, true, 'sampling was not declared')
  await t.rejects(client.exposeRoots([]), /pass `roots` to initialize/)
})

t.test('subscribeResource runs onUpdated for each update until unsubscribed', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const client = await httpClient(t, `${gateway.url}/live`)
  const updates: string[] = []
  await client.subscribeResource('live://counter', (uri) => updates.push(uri))
  await client.callTool('touch')
  await eventually(() => updates.length === 1)
  t.same(updates, ['live://counter'])
  const counter = await client.readResource('live://counter')
  t.match(counter.contents[0], { uri: 'live://counter', mimeType: 'text/plain' })
  await client.unsubscribeResource('live://counter')
  await client.callTool('touch')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(updates.length, 1, 'no update after unsubscribing')
})

t.test('list_changed handlers run when the server registers a component', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  let changed = 0
  const client = await httpClient(t, `${gateway.url}/live`, { on: { toolsListChanged: () => changed++ } })
  const before = await client.listTools()
  await client.callTool('grow')
  await eventually(() => changed === 1)
  const after = await client.listTools()
  t.equal(after.length, before.length + 1)
  t.ok(after.some((tool) => tool.name.startsWith('grown_')))
})

t.test('a session the server ended and a server that is gone are TransportErrors', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const errors: Error[] = []
  const client = await httpClient(t, `${gateway.url}/live`, { on: { error: (error) => errors.push(error) } }, { standaloneStream: false })
  const deleted = await fetch(`${gateway.url}/live`, { method: 'DELETE', headers: { 'mcp-session-id': client.transport.sessionId! } })
  t.equal(deleted.status, 200)
  await deleted.body?.cancel()
  const expired = await client.ping().catch((error: unknown) => error)
  t.type(expired, TransportError)
  t.match(expired, { status: 404, code: 'MCP_EDGE_CLIENT_TRANSPORT' })

  const other = await httpClient(t, `${gateway.url}/live`, {}, { standaloneStream: false })
  await gateway.close()
  const gone = await other.ping().catch((error: unknown) => error)
  t.type(gone, TransportError)
  t.match(gone, { message: /ECONNREFUSED|failed/ })
  t.same(errors, [], 'nothing else went wrong')
})

t.test('close() ends the session with DELETE and fails what is pending', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const seen = recordingFetch()
  const client = await httpClient(t, `${gateway.url}/live`, {}, { fetch: seen.fetch })
  const pending = client.callTool('slow', { steps: 50 })
  await new Promise((resolve) => setTimeout(resolve, 60))
  await client.close()
  await t.rejects(pending, TransportError)
  t.equal(seen.exchanges.at(-1), 'DELETE 200', 'the session was ended')
  t.equal(seen.headers.at(-1)!.get('mcp-session-id'), client.transport.sessionId)
  t.equal(await gateway.store.get(client.transport.sessionId!), undefined, 'the gateway forgot it')
  await t.rejects(client.ping(), TransportError, 'a closed client refuses')
})
