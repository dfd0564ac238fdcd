// A session belongs to its principal on every worker and every host: through a load balancer without
// stickiness (each request on the next worker, or the next host), another principal's valid token
// with a valid session id gets 404 on POST, GET and DELETE, and the owner keeps the session.
import path from 'node:path'
import t, { type Test } from 'tap'
import { startRedis } from '../store/redis-server.ts'
import { bearer, call, initialize, sessionRequest } from '../edge/fixtures/http.ts'
import { makeKey, startIssuer } from '../edge/fixtures/test-issuer.ts'
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts'
import { roundRobin } from './round-robin.ts'

// Real processes start slowly (each compiles its TypeScript).
t.setTimeout(400_000)
const AUDIENCE = 'https://mcp.test/echo'
const key = await makeKey('k1')
const issuer = await startIssuer(t, [key])
const redis = await startRedis(t)
const route = {
  location: '/mcp',
  handler: path.resolve('handlers/echo.ts'),
  server: { name: 'echo', version: '1.0.0' },
  auth: { jwt: { issuer: issuer.url, jwks_uri: issuer.jwksUri, audience: AUDIENCE }, required_scopes: ['mcp'] },
}
const redisStore = { type: 'redis', url: redis.url, key_prefix: 'principals:' }
// Started one test at a time: compiling TypeScript in several processes at once is slow on a busy machine.
const START_TIMEOUT_MS = 120_000

const alice = bearer(await issuer.mint(key, { sub: 'alice', scope: 'mcp' }, { audience: AUDIENCE }))
const bob = bearer(await issuer.mint(key, { sub: 'bob', scope: 'mcp' }, { audience: AUDIENCE }))
const ECHO = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${id}` } } })

async function bindingHolds(t: Test, targets: string[]): Promise<void> {
  const balancer = await roundRobin(t, targets)
  const url = `${balancer.url}/mcp`
  const session = await initialize(url, alice)
  // Four POSTs alternate over both targets: bob is refused on each, alice served on each.
  for (let id = 1; id <= 4; id++) {
    const refused = await call(url, session, ECHO(id), bob)
    t.equal(refused.status, 404, `bob's POST ${id}`)
    t.match(await refused.json(), { id, error: { code: -32001 } })
    const served = await call(url, session, ECHO(id), alice)
    t.equal(served.status, 200, `alice's POST ${id}`)
    await served.text()
  }
  for (let turn = 0; turn < 2; turn++) {
    const get = await sessionRequest(url, 'GET', session, bob)
    t.equal(get.status, 404, `bob's GET ${turn}`)
    await get.text()
  }
  for (let turn = 0; turn < 2; turn++) {
    t.equal((await sessionRequest(url, 'DELETE', session, bob)).status, 404, `bob's DELETE ${turn}`)
  }
  const targetsUsed = new Set(balancer.log.map((entry) => entry.target))
  t.equal(targetsUsed.size, targets.length, 'every target served some of it')
  t.equal((await sessionRequest(url, 'DELETE', session, alice)).status, 200, 'the owner can still end it')
  t.equal((await call(url, session, ECHO(9), alice)).status, 404, 'and then it is gone')
}

t.test('two workers on one host (cluster store)', async (t) => {
  const workers = await startGatewayProcess(t, { workers: 2, store: { type: 'cluster' }, routes: [route] }, 2, START_TIMEOUT_MS)
  // Through the primary: each request on a fresh connection is dealt to the next worker.
  await bindingHolds(t, [workers.url, workers.url])
  // Access lines are buffered (log.flush_interval): wait for them rather than read what arrived so far.
  const servedBy = (): Set<unknown> => new Set(workers.logs.filter((line) => line.msg === 'mcp request').map((line) => line.pid))
  await workers.logged(() => servedBy().size >= 2, 10_000).catch(() => undefined)
  t.equal(servedBy().size, 2, 'both workers served requests')
})

t.test('two hosts on Redis', async (t) => {
  const [hostA, hostB] = (await Promise.all([
    startGatewayProcess(t, { store: redisStore, routes: [route] }, 1, START_TIMEOUT_MS),
    startGatewayProcess(t, { store: redisStore, routes: [route] }, 1, START_TIMEOUT_MS),
  ])) as [GatewayProcess, GatewayProcess]
  await bindingHolds(t, [hostA.url, hostB.url])
})
