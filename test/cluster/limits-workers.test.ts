// Rate limits and quotas across two workers of one host (the cluster store: the counters live in the
// primary). A forwarder opens a fresh connection per request, so consecutive requests reach different
// workers: a limit that held per worker would let twice the limit through.
import t from 'tap'
import { limitRoutes, limitScenarios } from '../edge/limits-scenarios.ts'
import { startGatewayProcess } from './gateway-process.ts'
import { roundRobin } from './round-robin.ts'

t.setTimeout(180_000)
const gateway = await startGatewayProcess(t, { workers: 2, drain_timeout: 1, routes: limitRoutes }, 2)
const balancer = await roundRobin(t, [gateway.url])
limitScenarios(t, () => balancer.url, 2)

t.test('the requests were spread over both workers', async (t) => {
  const served = new Set(gateway.logs.filter((line) => line.msg === 'mcp request').map((line) => line.pid))
  t.equal(served.size, 2, 'both workers served requests of the scenarios')
})
