// Run-time catalogue changes, per-session servers and the guessing game across two hosts sharing one
// Redis, behind a round-robin forwarder without sticky sessions: each request goes to the other host
// than the one before. The overlays and the state live in Redis; a change reaches the other host
// before the list_changed that announces it.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { startRedis } from '../store/redis-server.ts'
import { catalogueRoutes, catalogueScenarios } from './catalogue-scenarios.ts'
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts'
import { roundRobin } from './round-robin.ts'

t.setTimeout(120_000)
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url))
const redis = await startRedis(t)
const store = { type: 'redis', url: redis.url, key_prefix: 'catalogue:', command_timeout: 2, connect_timeout: 2 }
const routes = catalogueRoutes(fixture('guess-pid'), fixture('catalogue'))
const hosts = (await Promise.all([startGatewayProcess(t, { store, routes }, 1, 60_000), startGatewayProcess(t, { store, routes }, 1, 60_000)])) as [GatewayProcess, GatewayProcess]
const balancer = await roundRobin(t, hosts.map((host) => host.url))
catalogueScenarios(t, () => balancer.url, 2)

t.test('every POST went to the other host than the one before', async (t) => {
  const posts = balancer.log.filter((entry) => entry.method === 'POST')
  t.ok(posts.length > 100, `${posts.length} POSTs`)
  t.ok(posts.every((entry, n) => n === 0 || entry.target !== posts[n - 1]!.target))
})
