/**
 * Issue 25, defect 1: a stdio upstream (the real server-everything) is never disabled by one slow
 * call or one crash. A call longer than the upstream's timeout fails alone; a child killed with
 * SIGKILL is restarted and the next calls are served; /readyz follows the pool (up, and down with
 * the reason for a child that cannot start). On one worker, and on two workers sharing Redis.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { gatewayWith, eventually } from '../client/harness.ts'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { everythingServer as everything } from '../fixtures/everything-server.ts'
import { startRedis } from '../store/redis-server.ts'
import { childrenOf, readyz, reaped } from './stdio-children.ts'

interface Teardown { teardown(fn: () => unknown): void }

t.setTimeout(240_000)
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)
const route = (timeout: number) => ({
  location: '/ev',
  server: { name: 'proxy', version: '1.0.0' },
  upstreams: [{ name: 'everything', command: ['node', everything, 'stdio'], timeout }],
  prefix: 'never',
})

async function session(t: Teardown, url: string): Promise<Client> {
  const client = new Client({ name: 'recovery', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  t.teardown(() => client.close())
  return client
}

/** A call that fails: thrown, or answered with isError (the proxy's "unavailable" result). */
async function failure(call: Promise<unknown>): Promise<string | undefined> {
  try {
    const result = (await call) as { isError?: boolean }
    return result.isError === true ? text(result) : undefined
  } catch (error) {
    return (error as Error).message
  }
}

t.test('one worker: a slow call fails alone, killed children come back, /readyz follows', async (t) => {
  const gateway = await gatewayWith(t, [route(4)])
  // Pre-started with the gateway: up before any session asked for it.
  await eventually(async () => (await readyz(gateway.url, '/ev')).everything?.state === 'up', 20_000)
  const a = await session(t, `${gateway.url}/ev`)

  const started = Date.now()
  const slow = await failure(a.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 7, steps: 2 } }))
  t.ok(slow !== undefined, `the call over the 4 s timeout fails: ${slow}`)
  t.ok(Date.now() - started < 6500, 'at its timeout, not when the operation ends')
  t.equal(text(await a.callTool({ name: 'echo', arguments: { message: 'after' } })), 'Echo: after', 'the same session is served next')
  const b = await session(t, `${gateway.url}/ev`)
  t.equal(text(await b.callTool({ name: 'echo', arguments: { message: 'new' } })), 'Echo: new', 'so is a new session')
  t.equal((await readyz(gateway.url, '/ev')).everything?.state, 'up', '/readyz: up')

  const before = childrenOf(process.pid, 'server-everything')
  t.ok(before.length > 0, 'children run')
  for (const pid of before) process.kill(pid, 'SIGKILL')
  // /readyz follows: down while no child is ready, up once one is again.
  const states: string[] = []
  await eventually(async () => {
    const state = (await readyz(gateway.url, '/ev')).everything?.state ?? 'none'
    if (states.at(-1) !== state) states.push(state)
    return state === 'up' && states.includes('down')
  }, 15_000)
  const up = Date.now()
  t.same(states.slice(-2), ['down', 'up'], '/readyz: down, then up')
  t.equal(text(await a.callTool({ name: 'echo', arguments: { message: 'again' } })), 'Echo: again', 'the next call is served')
  t.equal(text(await b.callTool({ name: 'echo', arguments: { message: 'b' } })), 'Echo: b', 'on every session')
  t.ok(Date.now() - up < 2000, 'within 2 s of the restart')
  const after = childrenOf(process.pid, 'server-everything')
  t.ok(after.length > 0 && after.every((pid) => !before.includes(pid)), 'by new children')
})

t.test('/readyz says down, with the reason, for a child that cannot start', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route(1), upstreams: [{ name: 'broken', command: ['node', '-e', 'process.exit(1)'] }] }])
  await eventually(async () => (await readyz(gateway.url, '/ev')).broken?.state === 'down', 10_000)
  t.match((await readyz(gateway.url, '/ev')).broken?.reason, /could not start/)
})

t.test('two workers on Redis: a slow call and a killed child disable nothing', async (t) => {
  const redis = await startRedis(t)
  // A restart of server-everything takes seconds on a loaded machine: the call that waits for it has 8.
  const gateway = await startGatewayProcess(t, { workers: 2, store: { type: 'redis', url: redis.url, key_prefix: 'recovery:' }, routes: [route(8)] }, 2)
  // A fresh connection per request: the cluster deals the session's requests to both workers.
  const balancer = await roundRobin(t, [gateway.url])
  const workers = gateway.logs.filter((line) => line.msg === 'mcp-edge listening').map((line) => line.pid as number)
  await eventually(() => workers.every((worker) => childrenOf(worker, 'server-everything').length === 1), 30_000)
  const a = await session(t, `${balancer.url}/ev`)

  for (let n = 0; n < 2; n++) {
    const slow = await failure(a.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 2 } }))
    t.ok(slow !== undefined, `a slow call fails: ${slow}`)
  }
  for (let n = 0; n < 6; n++) t.equal(text(await a.callTool({ name: 'echo', arguments: { message: `m${n}` } })), `Echo: m${n}`, `call ${n} after the slow ones is served`)

  const before = workers.flatMap((worker) => childrenOf(worker, 'server-everything'))
  for (const pid of before) process.kill(pid, 'SIGKILL')
  // Once the workers have seen their children go (a call racing the kill fails cleanly: it may have reached the child).
  await eventually(() => before.every(reaped), 5000)
  for (let n = 0; n < 6; n++) t.equal(text(await a.callTool({ name: 'echo', arguments: { message: `k${n}` } })), `Echo: k${n}`, `call ${n} after the kills is served`)
  const b = await session(t, `${balancer.url}/ev`)
  t.equal(text(await b.callTool({ name: 'echo', arguments: { message: 'new' } })), 'Echo: new', 'a new session too')
  const after = workers.flatMap((worker) => childrenOf(worker, 'server-everything'))
  t.ok(after.length >= 2 && after.every((pid) => !before.includes(pid)), 'each worker restarted its own child')
})

t.test('a slow-starting child is started with the gateway: the first list has its tools', async (t) => {
  // server-everything behind a 2 s delay (an `npx -y` installing), and a 1 s list deadline.
  const slowStart = ['node', '-e', 'setTimeout(() => import(process.argv[1]), 2000)', everything, 'stdio']
  const gateway = await gatewayWith(t, [{ ...route(4), upstreams: [{ name: 'everything', command: slowStart, list_timeout: 1 }] }])
  await eventually(async () => (await readyz(gateway.url, '/ev')).everything?.state === 'up', 20_000)
  const a = await session(t, `${gateway.url}/ev`)
  const listed = await a.listTools()
  t.ok(listed.tools.some((tool) => tool.name === 'echo'), 'the first list has the child\'s tools')
  t.notOk(listed._meta?.['mcp-edge/unavailable'], 'and marks nothing unavailable')
})
