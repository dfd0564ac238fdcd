// Rate limits and quotas across two hosts sharing one Redis (the counters live in Redis, one script
// per check). A forwarder sends each request to the other host in turn: a limit that held per host
// would let twice the limit through.
import t from 'tap'
import { limitRoutes, limitScenarios } from '../edge/limits-scenarios.ts'
import { startRedis } from '../store/redis-server.ts'
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts'
import { roundRobin } from './round-robin.ts'

t.setTimeout(180_000)
const redis = await startRedis(t)
const store = { type: 'redis', url: redis.url, key_prefix: 'limits:', command_timeout: 1, connect_timeout: 1 }
const hosts = (await Promise.all([
  startGatewayProcess(t, { store, routes: limitRoutes }),
  startGatewayProcess(t, { store, routes: limitRoutes }),
])) as [GatewayProcess, GatewayProcess]
const balancer = await roundRobin(t, hosts.map((host) => host.url))
limitScenarios(t, () => balancer.url, hosts.length)

t.test('the requests were spread over both hosts', async (t) => {
  for (const host of hosts) t.ok(host.logs.some((line) => line.msg === 'mcp request'), 'this host served requests of the scenarios')
})
