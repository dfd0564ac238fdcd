/**
 * A full route's fair share (docs/limits-and-errors.md) on one in-process gateway (memory store) and on two
 * gateways sharing Redis (two hosts; a round robin in front sends consecutive requests to both).
 */
import t from 'tap'
import { roundRobin } from '../cluster/round-robin.ts'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { startRedis } from '../store/redis-server.ts'
import { fairShareRoute, fairShareScenario } from './fair-share-scenario.ts'

t.setTimeout(180_000)
// The two backends at once: each scenario mostly waits (its request in flight takes 24 s), on its own
// gateways and store.
t.jobs = 2

t.test('memory store', async (t) => {
  const gateway = await gatewayWith(t, [fairShareRoute(fixture('live'))], { trust_proxy: true })
  await fairShareScenario(t, () => gateway.url)
  t.equal(await gateway.store.count('/fair'), 20, 'the route stayed at max_sessions')
})

t.test('Redis, two hosts', async (t) => {
  const redis = await startRedis(t)
  const store = { type: 'redis', url: redis.url, key_prefix: 'fair:' }
  const hosts = [
    await gatewayWith(t, [fairShareRoute(fixture('live'))], { trust_proxy: true, store }),
    await gatewayWith(t, [fairShareRoute(fixture('live'))], { trust_proxy: true, store }),
  ]
  const balancer = await roundRobin(t, hosts.map((host) => host.url))
  await fairShareScenario(t, () => balancer.url)
  t.equal(await hosts[0]!.store.count('/fair'), 20, 'the route stayed at max_sessions')
})
