// The Redis store on a real three-node Redis Cluster: the whole store contract, a session's keys in
// one slot while sessions spread over the nodes, and a whole SDK session over two gateway processes
// on the cluster behind a balancer without stickiness.
import { Cluster } from 'ioredis'
import t from 'tap'
import { RedisLimiter } from '../../gateway/store/limiter-redis.ts'
import { RedisStore } from '../../gateway/store/redis.ts'
import { liveRoute, startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { nonStickySession } from '../cluster/non-sticky.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { startRedisCluster } from './redis-topologies.ts'
import { limiterContract } from './limiter-contract.ts'
import { sessionRecord, storeContract } from './store-contract.ts'

t.setTimeout(180_000)
const cluster = await startRedisCluster(t)
let stores = 0

storeContract(t, 'redis cluster', async (limits) => {
  const store = new RedisStore({ cluster: cluster.nodes, keyPrefix: `c${++stores}:`, ...limits, connectTimeout: 2, commandTimeout: 1 })
  await store.connected()
  return store
})

// The limiter's keys share one hash tag: every check is one script on the cluster too.
limiterContract(t, 'redis cluster', async (t) => {
  const options = { cluster: cluster.nodes, keyPrefix: 'lim:', connectTimeoutMs: 2000, commandTimeoutMs: 1000 }
  const limiter = new RedisLimiter(options)
  const other = new RedisLimiter(options)
  const store = new RedisStore({ cluster: cluster.nodes, keyPrefix: 'lim:', eventCapacity: 16, cacheTtl: 60, connectTimeout: 2, commandTimeout: 1 })
  await Promise.all([store.connected(), limiter.connected(), other.connected()])
  t.teardown(async () => {
    await Promise.all([limiter.close(), other.close(), store.close()])
  })
  return { limiter, other, store }
})

t.test('a session’s keys share a slot; sessions spread over the nodes', async (t) => {
  const store = new RedisStore({ cluster: cluster.nodes, keyPrefix: 'spread:', eventCapacity: 16, cacheTtl: 60, connectTimeout: 2, commandTimeout: 1 })
  t.teardown(() => store.close())
  await store.connected()
  const inspector = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })))
  t.teardown(() => inspector.disconnect())
  const ids = Array.from({ length: 30 }, (_, n) => `session-${n}`)
  for (const id of ids) {
    await store.create(sessionRecord(id), 60_000)
    await store.append(id, 'GET', `event of ${id}`)
  }
  const slotOf = async (key: string): Promise<number> => Number(await inspector.call('CLUSTER', 'KEYSLOT', key))
  const sameSlot = await Promise.all(ids.map(async (id) => (await slotOf(`spread:s:{${id}}`)) === (await slotOf(`spread:e:{${id}}`))))
  t.ok(sameSlot.every(Boolean), 'record and event log of every session in one slot')
  const perNode = await Promise.all(inspector.nodes('master').map(async (node) => (await node.keys('spread:s:*')).length))
  t.equal(perNode.reduce((a, b) => a + b, 0), ids.length, 'every record is somewhere')
  t.ok(perNode.filter((count) => count > 0).length >= 2, `records spread over the nodes (${perNode.join(', ')})`)
  t.equal(await store.count('/a'), ids.length, 'the route index counts them all')
  t.ok(await store.delete(ids[0]!), 'delete works across slots')
  t.equal(await store.count('/a'), ids.length - 1, 'and leaves the index')
})

t.test('a whole SDK session over two gateway processes on the cluster, request by request alternating', async (t) => {
  const store = { type: 'redis', cluster: cluster.nodes, key_prefix: 'gw:', command_timeout: 2, connect_timeout: 2 }
  const [a, b] = (await Promise.all([
    startGatewayProcess(t, { store, routes: [liveRoute] }),
    startGatewayProcess(t, { store, routes: [liveRoute] }),
  ])) as [GatewayProcess, GatewayProcess]
  const balancer = await roundRobin(t, [a.url, b.url])
  await nonStickySession(t, { balancer, direct: [a.url, b.url], processes: 2 })
})
