/**
 * The same hostile initialize on every store backend gets the same answer (issue 16, row 4): deep
 * capabilities are refused by the transport before any store sees them, capabilities at the nesting
 * limit are stored by all three, and a value a backend cannot carry is a failure of that request,
 * not "store unavailable".
 */
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { RpcCode } from '../../gateway/wire/errors.ts'
import { buildGateway } from '../../gateway/server/server.ts'
import { ClusterStore } from '../../gateway/store/cluster-client.ts'
import { createStore } from '../../gateway/store/create-store.ts'
import { StoreUnavailableError, type SessionStore } from '../../gateway/store/store.ts'
import { HANDLER, inject } from '../fixtures/transport-gateway.ts'
import { reapOnExit } from './reaper.ts'
import { startRedis } from './redis-server.ts'
import { sessionRecord } from './store-contract.ts'

t.setTimeout(120_000)
const primaryFile = fileURLToPath(new URL('./fixtures/cluster-primary.ts', import.meta.url))

async function clusterStore(t: Test): Promise<ClusterStore> {
  const child: ChildProcess = fork(primaryFile, ['1024', '90'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  reapOnExit(child)
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  await once(child, 'message')
  const store = new ClusterStore(child)
  t.teardown(() => store.close())
  return store
}

const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
const initialize = (id: string, capabilities: string): string =>
  `{"jsonrpc":"2.0","id":"${id}","method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"deep","version":"1"},"capabilities":${capabilities}}}`

t.test('every store: the same answers to a deep initialize and to one at the limit', async (t) => {
  const redis = await startRedis(t)
  const stores: Record<string, () => Promise<SessionStore | undefined>> = {
    memory: async () => undefined,
    cluster: () => clusterStore(t),
    redis: async () => {
      const store = createStore({ type: 'redis', url: redis.url, key_prefix: 'deep:', event_capacity: 16, cache_ttl: 10, event_bytes: 1 << 20, connect_timeout: 2, command_timeout: 2 })
      t.teardown(() => store.close())
      for (let tries = 0; !(await store.ready()) && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 20))
      return store
    },
  }
  const answers: Record<string, unknown> = {}
  for (const [name, make] of Object.entries(stores)) {
    const store = await make()
    const doc = { log: { level: 'silent' }, routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'deep', version: '1' } }] }
    const gateway = await buildGateway(configFromObject(doc, '<test>'), store === undefined ? {} : { store })
    t.teardown(() => gateway.close())
    const deep = await inject(gateway, initialize('deep', nested(100_000)))
    // The message is 2 levels deep before capabilities ({ params { capabilities: …), so 126 more reach 128.
    const atLimit = await inject(gateway, initialize('limit', nested(125)))
    const ready = await gateway.app.inject({ method: 'GET', url: '/readyz' })
    answers[name] = {
      deep: [deep.statusCode, deep.json().id, deep.json().error?.code],
      atLimit: [atLimit.statusCode, atLimit.json().id, 'result' in atLimit.json()],
      ready: ready.statusCode,
    }
    const sessionId = atLimit.headers['mcp-session-id'] as string
    const stored = await gateway.store.get(sessionId)
    t.ok(stored?.clientCapabilities, `${name}: the capabilities at the limit are stored`)
  }
  const expected = { deep: [400, 'deep', RpcCode.InvalidRequest], atLimit: [200, 'limit', true], ready: 200 }
  t.same(answers, { memory: expected, cluster: expected, redis: expected }, 'the same answers on every store')
})

t.test('cluster: a value the IPC channel cannot carry fails the call, and the store stays available', async (t) => {
  const store = await clusterStore(t)
  const record = { ...sessionRecord('unserialisable'), clientCapabilities: { experimental: { big: 1n } } }
  const failed = await store.create(record as never, 60_000).then(() => undefined, (error: unknown) => error)
  t.ok(failed instanceof Error, 'the create fails')
  t.notOk(failed instanceof StoreUnavailableError, `not reported as "store unavailable": ${String(failed)}`)
  t.equal(await store.ready(), true, 'the store is still ready')
  await store.create(sessionRecord('fine'), 60_000)
  t.ok(await store.get('fine'), 'and still serves')
})
