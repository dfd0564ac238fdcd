/**
 * The route events a handler listens to (`roots/list_changed`, `resources/subscribe`,
 * `resources/unsubscribe`), `resources/subscribe` to an unknown URI (-32002, as lua-resty-mcp), and the
 * `onProgress` of a server→client request: the official SDK client over real HTTP on loopback.
 */
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { connect, gatewayWith } from '../e2e/harness.ts'
import { eventually } from '../fixtures/waiting.ts'
import { seen } from './fixtures/events.ts'

const HANDLER = new URL('./fixtures/events.ts', import.meta.url).pathname
const ROUTE = { location: '/events', handler: HANDLER, server: { name: 'events', version: '1' }, capabilities: { resources: { subscribe: true } } }

t.test('resources/subscribe: known URIs are events, unknown ones -32002 and no event', async (t) => {
  const gateway = await gatewayWith(t, [ROUTE])
  const client = await connect(t, `${gateway.url}/events`)
  const sessionId = (client.transport as { sessionId?: string }).sessionId!
  seen.events = []
  await client.subscribeResource({ uri: 'events://doc' })
  await client.subscribeResource({ uri: 'events://items/42' })
  await t.rejects(client.subscribeResource({ uri: 'events://nothing' }), { code: -32002, message: /Resource not found/ })
  await t.rejects(client.subscribeResource({ uri: 'other://doc' }), { code: -32002 })
  await client.unsubscribeResource({ uri: 'events://doc' })
  await eventually(() => seen.events.length === 3)
  t.same(seen.events, [
    { event: 'resources/subscribe', session: sessionId, params: { uri: 'events://doc' } },
    { event: 'resources/subscribe', session: sessionId, params: { uri: 'events://items/42' } },
    { event: 'resources/unsubscribe', session: sessionId, params: { uri: 'events://doc' } },
  ])
  t.same((await gateway.store.get(sessionId))?.subscriptions, ['events://items/42'], 'the unknown URIs were not stored')
})

t.test('notifications/roots/list_changed reaches the listener with the session', async (t) => {
  const gateway = await gatewayWith(t, [ROUTE])
  const client = await connect(t, `${gateway.url}/events`, { roots: { listChanged: true } })
  seen.events = []
  await client.sendRootsListChanged()
  await eventually(() => seen.events.length === 1)
  t.same(seen.events, [{ event: 'roots/list_changed', session: (client.transport as { sessionId?: string }).sessionId, params: {} }])
})

t.test('onProgress of a server→client request hears the client, and returning false cancels it', async (t) => {
  const gateway = await gatewayWith(t, [ROUTE])
  const cancelled: unknown[] = []
  const client = await connect(t, `${gateway.url}/events`, { sampling: {} }, (client) => {
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      const token = request.params._meta?.progressToken
      t.ok(token !== undefined, 'the request carries a progressToken because the handler asked for progress')
      extra.signal.addEventListener('abort', () => cancelled.push(extra.signal.reason))
      for (let step = 1; step <= 3 && !extra.signal.aborted; step++) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token!, progress: step, total: 3, message: `step ${step}` } })
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return { role: 'assistant', model: 'test', content: { type: 'text', text: 'three' } }
    })
  })
  const full = await client.callTool({ name: 'sample_with_progress', arguments: {} })
  t.same(full.content, [{ type: 'text', text: 'sampled: three' }])
  t.same(seen.progress, [[1, 3, 'step 1'], [2, 3, 'step 2'], [3, 3, 'step 3']], 'every report, in order')
  const stopped = await client.callTool({ name: 'sample_with_progress', arguments: { stopAt: 2 } })
  t.match(stopped.content, [{ type: 'text', text: /^gave up: sampling\/createMessage cancelled/ }])
  t.same(seen.progress, [[1, 3, 'step 1'], [2, 3, 'step 2']], 'no report after the cancel')
  await eventually(() => cancelled.length === 1)
  t.pass('the client was told (notifications/cancelled)')
})
