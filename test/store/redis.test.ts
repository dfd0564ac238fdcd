// The session store contract against a real redis-server, then what only the Redis backend promises:
// coherent caches across stores, coalesced touches, compact records, and outages that fail fast.
import { Redis } from 'ioredis'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { RedisStore, type RedisStoreOptions } from '../../gateway/store/redis.ts'
import { StoreUnavailableError } from '../../gateway/store/store.ts'
import { startRedis } from './redis-server.ts'
import { sessionRecord, storeContract } from './store-contract.ts'

const redis = await startRedis(t)
let stores = 0

function redisStore(options: Partial<RedisStoreOptions> = {}): RedisStore {
  return new RedisStore({ url: redis.url, keyPrefix: `t${++stores}:`, eventCapacity: 1024, cacheTtl: 90, connectTimeout: 2, commandTimeout: 1, ...options })
}

/** A second client on the same Redis to look at keys and count commands. */
function inspector(t: Test): Redis {
  const client = new Redis(redis.url)
  t.teardown(() => client.disconnect())
  return client
}

storeContract(t, 'redis', async (limits) => {
  const store = redisStore(limits)
  await store.connected()
  return store
})

t.test('two stores on one Redis share sessions, and an update on one reaches the other’s cache', async (t) => {
  const keyPrefix = `shared${++stores}:`
  const a = redisStore({ keyPrefix })
  const b = redisStore({ keyPrefix })
  t.teardown(() => a.close())
  t.teardown(() => b.close())
  await Promise.all([a.connected(), b.connected()])
  await a.create(sessionRecord('s1'), 60_000)
  t.same(await b.get('s1'), sessionRecord('s1'), 'b reads what a created')
  t.equal(await b.get('s1'), await b.get('s1'), 'then serves it from its cache')
  await a.update('s1', { logLevel: 'error' })
  await sleep(50)
  t.equal((await b.get('s1'))?.logLevel, 'error', 'the invalidation reached b')
  await a.delete('s1')
  await sleep(50)
  t.equal(await b.get('s1'), undefined, 'so did the delete')
})

t.test('the hot path: a cached get costs no command and touches are coalesced', async (t) => {
  const store = redisStore()
  t.teardown(() => store.close())
  await store.connected()
  await store.create(sessionRecord('hot'), 60_000)
  const monitor = await inspector(t).monitor()
  const commands: string[] = []
  monitor.on('monitor', (_time: string, args: string[]) => commands.push(args.join(' ')))
  t.teardown(() => monitor.disconnect())
  await sleep(50)
  for (let n = 0; n < 100; n++) {
    await store.get('hot')
    store.touch('hot')
  }
  await sleep(100)
  t.same(commands, [], '100 gets and touches within the window: nothing reached Redis')
})

t.test('a touch refreshes the TTL once per window', async (t) => {
  const store = redisStore()
  t.teardown(() => store.close())
  await store.connected()
  const keyPrefix = `t${stores}:`
  const client = inspector(t)
  await store.create(sessionRecord('s1'), 1000)
  await sleep(300)
  store.touch('s1')
  await sleep(30)
  t.ok((await client.pttl(`${keyPrefix}s:{s1}`)) > 900, 'refreshed after 300 ms (the window is 100 ms)')
  store.touch('s1')
  await sleep(30)
  t.ok((await client.pttl(`${keyPrefix}s:{s1}`)) < 1000 - 30, 'a second touch within the window is skipped')
})

t.test('an idle session costs under 0.6 KiB of Redis memory', async (t) => {
  const store = redisStore()
  t.teardown(() => store.close())
  await store.connected()
  const keyPrefix = `t${stores}:`
  const client = inspector(t)
  const sessions = 1000
  const before = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1])
  for (let n = 0; n < sessions; n++) {
    await store.create({
      ...sessionRecord(crypto.randomUUID()),
      clientInfo: { name: 'claude-ai', version: '0.1.0' },
      clientCapabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } },
      principal: undefined,
      initialized: true,
    }, 600_000)
  }
  const after = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1])
  const perSession = (after - before) / sessions
  const [key] = await client.keys(`${keyPrefix}s:*`)
  const hash = Number(await client.memory('USAGE', key!))
  t.comment(`per idle session: ${Math.round(perSession)} bytes of used_memory, ${hash} bytes MEMORY USAGE of its record`)
  t.ok(perSession <= 600, `${Math.round(perSession)} bytes ≤ 600 (record hash plus its entry in the route index)`)
  t.ok(hash <= 400, `the record alone: ${hash} bytes`)
})

t.test('Redis going away: operations reject with StoreUnavailableError, fast, and recover by themselves', async (t) => {
  const store = redisStore({ commandTimeout: 0.5 })
  t.teardown(() => store.close())
  await store.connected()
  await store.create(sessionRecord('s1'), 60_000)
  const statuses: string[] = []
  const watched = new RedisStore({ url: redis.url, keyPrefix: `t${stores}:`, eventCapacity: 8, cacheTtl: 90, connectTimeout: 1, commandTimeout: 0.5, onStatus: (status) => statuses.push(status) })
  t.teardown(() => watched.close())
  await watched.connected()

  await redis.stop()
  await sleep(50)
  t.equal(await store.ready(), false, 'not ready')
  const started = Date.now()
  await t.rejects(store.get('s1'), StoreUnavailableError, 'get fails (the cache is off while invalidations may be lost)')
  await t.rejects(store.create(sessionRecord('s2'), 60_000), StoreUnavailableError)
  await t.rejects(store.bus.publish('x', { type: 'alive' }), StoreUnavailableError)
  t.ok(Date.now() - started < 500, 'without waiting for a timeout')
  store.touch('s1')
  t.same(statuses, ['down'], 'the outage is reported once')

  await redis.start()
  const deadline = Date.now() + 5000
  while (!(await store.ready()) && Date.now() < deadline) await sleep(50)
  t.equal(await store.ready(), true, 'ready again without a restart')
  t.equal(await store.get('s1'), undefined, 'the new Redis is empty')
  await store.create(sessionRecord('s1'), 60_000)
  t.ok(await store.get('s1'), 'and serves again')
  while (statuses.length < 2 && Date.now() < deadline) await sleep(50)
  t.same(statuses, ['down', 'up'])
})
