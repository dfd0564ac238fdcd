// A full route's fair share across two workers of one host (the limiter in the cluster primary): the
// session in flight on one worker is not ended by an initialize on the other.
import t from 'tap'
import { fairShareRoute, fairShareScenario } from '../edge/fair-share-scenario.ts'
import { livePid, startGatewayProcess } from './gateway-process.ts'
import { roundRobin } from './round-robin.ts'

t.setTimeout(180_000)
const gateway = await startGatewayProcess(t, { workers: 2, drain_timeout: 1, trust_proxy: true, routes: [fairShareRoute(livePid)] }, 2)
const balancer = await roundRobin(t, [gateway.url])
await fairShareScenario(t, () => balancer.url)

t.test('both workers served, and sessions were ended for the fair share', async (t) => {
  const served = new Set(gateway.logs.filter((line) => line.msg === 'mcp request').map((line) => line.pid))
  t.equal(served.size, 2, 'both workers served requests')
  t.ok(gateway.logs.some((line) => typeof line.msg === 'string' && line.msg.startsWith('session ended at max_sessions')), 'the ending is logged')
})
