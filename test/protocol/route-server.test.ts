// The handler's `server`: background tasks, waitBackgroundTasks, shutdown, and run-time changes.
import { pino } from 'pino'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { defineHandler, mcp, type RouteServer } from '../../gateway/index.ts'
import { RequestStateCodec } from '../../gateway/protocol/stateless/request-state.ts'
import { buildEndpoint } from '../../gateway/server/route-endpoint.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { fixture } from '../e2e/harness.ts'

const one = mcp.tool('one', () => '1')
const two = mcp.tool('two', () => '2', { description: 'declared at setup, listed by nobody yet' })

async function routeServer(t: { teardown(fn: () => unknown): void }): Promise<{ server: RouteServer; endpoint: Awaited<ReturnType<typeof buildEndpoint>>; store: MemoryStore }> {
  const config = configFromObject({ routes: [{ location: '/r', handler: fixture('live'), server: { name: 'r', version: '1' } }] }, '<test>')
  const store = new MemoryStore({ eventCapacity: 8, cacheTtl: 60 })
  let captured: RouteServer | undefined
  const handler = defineHandler((_mcp, server) => {
    captured = server
    void server.register(one)
    server.declare(two)
  })
  const endpoint = await buildEndpoint(config.routes[0]!, handler, store, pino({ level: 'silent' }), new RequestStateCodec('a-key-of-sixteen-chars', 60))
  t.teardown(async () => {
    endpoint.close()
    await store.close()
  })
  return { server: captured!, endpoint, store }
}

t.test('waitBackgroundTasks waits for tracked work, or for its timeout', async (t) => {
  const { server } = await routeServer(t)
  let finished = false
  server.background(new Promise<void>((resolve) => setTimeout(() => { finished = true; resolve() }, 80)))
  server.background(Promise.reject(new Error('a failing task is logged, not thrown')))
  // No wall-clock bound here: on Node 22 the first turns after a route is built can take 150+ ms
  // (module and schema work finishing), which delays the 10 ms timer without changing what it means.
  t.equal(await server.waitBackgroundTasks(10), false, 'the timeout came first: it says so')
  t.equal(finished, false, 'and the task had not finished')
  t.equal(await server.waitBackgroundTasks(), true, 'without a timeout it waits for every task')
  t.equal(finished, true, 'then it waited for the task')
})

t.test('run-time register, unregister and replace change what the route lists, through the store', async (t) => {
  const { server, endpoint, store } = await routeServer(t)
  const names = () => endpoint.registry.listTools().tools.map((tool) => tool.name)
  t.same(names(), ['one'], 'declared components are not listed')
  t.equal(await server.unregisterTool('one'), true)
  t.equal(await server.unregisterTool('one'), false, 'a second time: nothing to remove')
  t.same(names(), [])
  await server.register(two, one)
  t.same(names(), ['one', 'two'], 'a declared component shown, and one registered at setup back in its place')
  t.equal(endpoint.registry.tool('two')?.descriptor.description, 'declared at setup, listed by nobody yet')
  await t.rejects(server.register(two), /duplicate tool "two": already registered on this route/, 'a listed name again is an error, as at setup')
  await server.unregisterTool('two')
  await server.register(mcp.tool('two', two.callback, { description: 'new words' }))
  t.equal(endpoint.registry.tool('two')?.descriptor.description, 'new words', 'the same callback with new descriptions')
  t.throws(() => server.register(mcp.tool('three', () => '3')), { code: 'MCP_EDGE_UNDECLARED_COMPONENT' }, 'a callback nobody declared is refused')
  t.throws(() => server.register(mcp.tool('one', () => 'another')), { code: 'MCP_EDGE_UNDECLARED_COMPONENT' }, 'so is a new closure under a declared name')
  t.throws(() => server.declare(mcp.tool('late', () => '')), { code: 'MCP_EDGE_UNDECLARED_COMPONENT' }, 'declare is for setup only')
  await server.register(mcp.resource('data://note', 'note', 'text made at run time'))
  t.same(endpoint.registry.listResources().resources.map((r) => r.uri), ['data://note'], 'a data resource needs no declaration')
  await server.replaceTools([])
  t.same(names(), [])
  t.equal(endpoint.registry.tool('one'), undefined, 'a replaced-away tool cannot be called either')
  const stored = await store.readDoc({ route: '/r', name: 'catalogue' })
  t.equal(stored?.version, 6, 'every change (not the no-op unregister nor the refused one) is a version in the store')
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
