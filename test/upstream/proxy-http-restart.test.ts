/**
 * Issue 25, defect 2: the official SDK's Streamable HTTP servers (server-everything here) answer
 * `400 "Bad Request: No valid session ID provided"` to a session they do not know, after a restart,
 * where the spec says 404. A proxy route over two gateway processes on Redis, behind a round-robin
 * balancer, in front of server-everything that is SIGKILLed and started again on its port:
 * - restarted between calls: the next call on each process is answered, on a new upstream session;
 * - restarted while calls come: they are clean "unavailable" results while it is down, and both
 *   processes serve again within 2 s of its restart.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { restartableEverything } from '../fixtures/everything-server.ts'
import { startRedis } from '../store/redis-server.ts'

t.setTimeout(180_000)

interface CallResult { isError?: boolean; content?: Array<{ text?: string }> }
const text = (result: CallResult): string => result.content?.[0]?.text ?? ''

async function setUp(t: Test) {
  const redis = await startRedis(t)
  const everything = await restartableEverything(t)
  const store = { type: 'redis', url: redis.url, key_prefix: 'restart:' }
  const route = {
    location: '/p',
    server: { name: 'proxy', version: '1.0.0' },
    read_timeout: 10,
    upstreams: [{ name: 'everything', url: `${everything.origin}/mcp` }],
    prefix: 'never',
  }
  const [a, b] = (await Promise.all([startGatewayProcess(t, { store, routes: [route] }), startGatewayProcess(t, { store, routes: [route] })])) as [GatewayProcess, GatewayProcess]
  const balancer = await roundRobin(t, [a.url, b.url])
  const client = new Client({ name: 'restart-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${balancer.url}/p`)))
  t.teardown(() => client.close())
  const echo = async (message: string): Promise<CallResult> => (await client.callTool({ name: 'echo', arguments: { message } })) as CallResult
  return { everything, balancer, echo }
}

t.test('restarted between calls: the 400 to the old session makes a new one, and the call is answered on each process', async (t) => {
  const { everything, balancer, echo } = await setUp(t)
  for (let n = 0; n < 4; n++) t.equal(text(await echo(`before ${n}`)), `Echo: before ${n}`, `call ${n} before the restart`)
  await everything.kill()
  await everything.start()
  // Four calls: two on each process, the first on each meeting the upstream's 400.
  for (let n = 0; n < 4; n++) {
    const result = await echo(`after ${n}`)
    t.not(result.isError, true, `call ${n} after the restart is answered (${text(result)})`)
    t.equal(text(result), `Echo: after ${n}`, `call ${n}: the upstream's answer`)
  }
  const targets = new Set(balancer.log.filter((entry) => entry.body?.method === 'tools/call').slice(-4).map((entry) => entry.target))
  t.same(targets, new Set([0, 1]), 'both processes served calls after the restart')
})

t.test('restarted while calls come: clean errors while down, both processes serve again within 2 s of the restart', async (t) => {
  const { everything, echo } = await setUp(t)
  t.equal(text(await echo('warm a')), 'Echo: warm a')
  t.equal(text(await echo('warm b')), 'Echo: warm b')
  await everything.kill()
  for (let n = 0; n < 4; n++) {
    const result = await echo(`down ${n}`)
    t.equal(result.isError, true, `call ${n} while down is an isError result`)
    t.match(text(result), /unavailable/, 'that says the upstream is unavailable')
  }
  await sleep(1500) // long enough for each process's health to back off past its first probe
  await everything.start()
  const restarted = Date.now()
  let consecutive = 0
  let servedAfter = -1
  while (Date.now() - restarted < 10_000) {
    const result = await echo('back?')
    if (result.isError === true) {
      consecutive = 0
      await sleep(50)
      continue
    }
    t.equal(text(result), 'Echo: back?')
    // Two in a row: both processes (the balancer alternates).
    if (++consecutive === 2) {
      servedAfter = Date.now() - restarted
      break
    }
  }
  t.ok(servedAfter >= 0 && servedAfter <= 2000, `both processes served again ${servedAfter} ms after the restart`)
  for (let n = 0; n < 6; n++) t.equal(text(await echo(`steady ${n}`)), `Echo: steady ${n}`, `call ${n} after recovery`)
})
