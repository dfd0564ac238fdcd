// Rate limits and quotas in one gateway process (memory store), over real HTTP, with the official SDK
// client where a client's view matters; the same scenarios run across two workers and two hosts
// (test/cluster/limits-*.test.ts).
import t from 'tap'
import { connect, gatewayWith } from '../e2e/harness.ts'
import { limitRoutes, limitScenarios } from './limits-scenarios.ts'

t.setTimeout(90_000)

// The SDK's own route, so the scenarios' calls do not count against it.
const sdkRoute = { ...limitRoutes[1]!, location: '/sdk' }
const gateway = await gatewayWith(t, [...limitRoutes, sdkRoute])
limitScenarios(t, () => gateway.url)

t.test('the official SDK client sees a tool over its limit as an isError result with the wait', async (t) => {
  const client = await connect(t, `${gateway.url}/sdk`)
  const results = []
  for (let n = 0; n < 4; n++) results.push(await client.callTool({ name: 'whoami' }))
  t.same(results.map((result) => result.isError ?? false), [false, false, false, true])
  t.match(results[3]!.structuredContent, { retryAfterMs: Number, limit: 3, scope: String })
})

t.test('behind a trusted proxy the client is the address it names in X-Forwarded-For; an untrusted one cannot pick its key', async (t) => {
  const route = { location: '/one', handler: limitRoutes[0]!.handler, server: { name: 'one', version: '1.0.0' }, limits: { sessions_per_principal: 1 } }
  const init = (base: string, forwardedFor: string) =>
    fetch(`${base}/one`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-forwarded-for': forwardedFor },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    }).then(async (response) => {
      await response.text()
      return response.status
    })
  const trusting = await gatewayWith(t, [route], { trust_proxy: ['loopback'] })
  t.same([await init(trusting.url, '10.0.0.1'), await init(trusting.url, '10.0.0.1'), await init(trusting.url, '10.0.0.2')], [200, 429, 200], 'one session per forwarded client')
  const plain = await gatewayWith(t, [route])
  t.same([await init(plain.url, '10.0.0.1'), await init(plain.url, '10.0.0.2')], [200, 429], 'without trust_proxy the header is ignored: both are the TCP peer')
})
