// The handler's `server`: background tasks, waitBackgroundTasks, shutdown, and run-time changes.
import { pino } from 'pino'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { defineHandler, type RouteServer } from '../../gateway/index.ts'
import { RequestStateCodec } from '../../gateway/protocol/stateless/request-state.ts'
import { buildEndpoint } from '../../gateway/server/route-endpoint.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { fixture } from '../e2e/harness.ts'

async function routeServer(t: { teardown(fn: () => unknown): void }): Promise<{ server: RouteServer; endpoint: Awaited<ReturnType<typeof buildEndpoint>> }> {
  const config = configFromObject({ routes: [{ location: '/r', handler: fixture('live'), server: { name: 'r', version: '1' } }] }, '<test>')
  const store = new MemoryStore({ eventCapacity: 8, cacheTtl: 60 })
  let captured: RouteServer | undefined
  const handler = defineHandler((mcp, server) => {
    captured = server
    server.register(mcp.tool('one', () => '1'))
  })
  const endpoint = await buildEndpoint(config.routes[0]!, handler, store, pino({ level: 'silent' }), new RequestStateCodec('a-key-of-sixteen-chars', 60))
  t.teardown(async () => {
    endpoint.close()
    await store.close()
  })
  return { server: captured!, endpoint }
}

t.test('waitBackgroundTasks waits for tracked work, or for its timeout', async (t) => {
  const { server } = await routeServer(t)
  let finished = false
  server.background(new Promise<void>((resolve) => setTimeout(() => { finished = true; resolve() }, 80)))
  server.background(Promise.reject(new Error('a failing task is logged, not thrown')))
  const started = Date.now()
  await server.waitBackgroundTasks(10)
  t.equal(finished, false, 'the timeout came first')
  t.ok(Date.now() - started < 70)
  await server.waitBackgroundTasks()
  t.equal(finished, true, 'then it waited for the task')
})

t.test('register, unregister and replace change what the route lists', async (t) => {
  const { server, endpoint } = await routeServer(t)
  const changed: string[] = []
  endpoint.registry.onChange((list) => changed.push(list))
  const names = () => endpoint.registry.listTools().tools.map((tool) => tool.name)
  t.same(names(), ['one'])
  t.equal(server.unregisterTool('one'), true)
  t.equal(server.unregisterTool('one'), false, 'a second time: nothing to remove')
  t.same(names(), [])
  server.replaceTools([])
  t.same(changed, ['tools', 'tools'])
  t.equal(server.location, '/r')
})

t.test('shutdown ends what the route holds on this worker', async (t) => {
  const { server, endpoint } = await routeServer(t)
  let closed = false
  endpoint.openOutlet('s1', { send: () => undefined, sendLogged: () => undefined, close: () => { closed = true } })
  await server.shutdown()
  t.equal(closed, true, 'the session outlet was closed')
  t.equal(endpoint.live.get('s1'), undefined)
})
