/**
 * Issue 25, defect 8: an upstream that comes up, goes away and comes back is announced to the route's
 * sessions with `notifications/tools/list_changed`, and the first list waits (within `start_wait`)
 * for an upstream that is still starting. Two gateway processes on Redis behind a round-robin
 * balancer, in front of server-everything over Streamable HTTP that starts only after them, is then
 * SIGKILLed and started again; the official SDK client listens for list_changed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { gatewayWith } from '../client/harness.ts'
import { startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { restartableEverything } from '../fixtures/everything-server.ts'
import { eventually, freePort } from '../fixtures/waiting.ts'
import { startRedis } from '../store/redis-server.ts'

t.setTimeout(180_000)

interface Listed { tools: Array<{ name: string }>; _meta?: Record<string, unknown> }

t.test('an upstream starting after the gateway is waited for; its going and coming back are list_changed', async (t) => {
  const redis = await startRedis(t)
  const everything = await restartableEverything(t, 20_000, false)
  const store = { type: 'redis', url: redis.url, key_prefix: 'avail:' }
  const route = {
    location: '/p',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'late', url: `${everything.origin}/mcp`, health_interval: 1, start_wait: 20 }],
    prefix: 'never',
  }
  const [a, b] = (await Promise.all([startGatewayProcess(t, { store, routes: [route] }), startGatewayProcess(t, { store, routes: [route] })])) as [GatewayProcess, GatewayProcess]
  const balancer = await roundRobin(t, [a.url, b.url])
  const client = new Client({ name: 'availability', version: '1.0.0' })
  let changed = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++)
  await client.connect(new StreamableHTTPClientTransport(new URL(`${balancer.url}/p`)))
  t.teardown(() => client.close())

  // The upstream is not there yet: the first list waits for it instead of leaving it out.
  const listing = client.listTools() as Promise<Listed>
  await sleep(500)
  await everything.start()
  const first = await listing
  t.ok(first.tools.some((tool) => tool.name === 'echo'), `the first list has the late upstream's tools (${first.tools.length})`)
  t.equal(first._meta?.['mcp-edge/unavailable'], undefined, 'and names nothing unavailable')

  const before = changed
  await everything.kill()
  await eventually(() => changed > before, 10_000)
  t.pass(`list_changed when the upstream went away (${changed - before})`)
  await eventually(async () => {
    const listed = (await client.listTools()) as Listed
    return JSON.stringify(listed._meta?.['mcp-edge/unavailable']) === '["late"]'
  }, 10_000)
  const down = (await client.listTools()) as Listed
  t.notOk(down.tools.some((tool) => tool.name === 'echo'), 'a list while it is down leaves its tools out')

  await sleep(300) // coalesced notifications of the going away are out
  const beforeBack = changed
  await everything.start()
  await eventually(() => changed > beforeBack, 10_000)
  t.pass(`list_changed when it came back (${changed - beforeBack})`)
  // The worker that noticed sent list_changed; each other worker (here, the other host, which the
  // balancer may give the next list) notices by its own probe, at most 500 ms apart while down
  // (docs/proxy-routes.md), so within 2 s every worker lists the tools again (a CI run at jobs 4 saw
  // the other host's list first).
  const noticed = Date.now()
  await eventually(async () => {
    const both = (await Promise.all([client.listTools(), client.listTools()])) as Listed[]
    return both.every((listed) => listed.tools.some((tool) => tool.name === 'echo'))
  }, 2_000)
  t.pass(`lists on both hosts have its tools again, ${Date.now() - noticed} ms after list_changed`)
})

t.test('an upstream that never starts: the first list waits no longer than start_wait', async (t) => {
  const port = await freePort()
  const proxy = await gatewayWith(t, [{
    location: '/p',
    server: { name: 'p', version: '1.0.0' },
    upstreams: [{ name: 'never', url: `http://127.0.0.1:${port}/mcp`, start_wait: 1.5, list_timeout: 1 }],
    prefix: 'never',
  }])
  const client = new Client({ name: 'never', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/p`)))
  t.teardown(() => client.close())
  const started = Date.now()
  const listed = (await client.listTools()) as Listed
  const took = Date.now() - started
  t.same(listed._meta?.['mcp-edge/unavailable'], ['never'], 'answered without it, saying so')
  t.ok(took < 1500 + 1000 + 500, `within start_wait and list_timeout (${took} ms)`)
  const again = Date.now()
  await client.listTools()
  t.ok(Date.now() - again < 500, 'once the start wait is over, lists do not wait')
})
