// The admin API over a real gateway of 2 workers (`mcp-edge start`): every endpoint, the whole
// gateway's numbers (not one worker's), the reload, and its guards (token, JWT scope, Host, read-only).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { configFromObject, ConfigError } from '../../gateway/config/load.ts'
import { buildAdminApp, type AdminSource } from '../../gateway/admin/admin-app.ts'
import type { AdminConfig } from '../../gateway/config/types.ts'
import { liveRoute, startGatewayProcess } from '../cluster/gateway-process.ts'
import { gatewayWith } from '../e2e/harness.ts'
import { fixture } from '../e2e/harness.ts'

/** A JSON-RPC request on its own connection (so the cluster hands it to either worker). */
async function rpc(url: string, sessionId: string | undefined, body: object): Promise<{ sessionId: string | undefined; message: Record<string, any> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', connection: 'close' }
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
  const text = await response.text()
  const data = text.startsWith('{') ? text : text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).pop() ?? '{}'
  return { sessionId: response.headers.get('mcp-session-id') ?? sessionId, message: JSON.parse(data) as Record<string, any> }
}

async function session(url: string): Promise<string> {
  const opened = await rpc(url, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'admin-test', version: '1' } } })
  await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': opened.sessionId!, 'mcp-protocol-version': '2025-11-25', connection: 'close' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
  return opened.sessionId!
}

const get = async (base: string, path: string): Promise<any> => {
  const response = await fetch(`${base}${path}`)
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  return response.json()
}

t.test('over 2 workers: every endpoint reports the whole gateway', async (t) => {
  // An upstream for a proxy route: a gateway of this test serving echo.
  const upstream = await gatewayWith(t, [{ location: '/echo', handler: fixture('../../../handlers/echo'), server: { name: 'up', version: '1' } }])
  const gateway = await startGatewayProcess(t, {
    workers: 2,
    admin: { listen: '127.0.0.1:0', reload: true },
    routes: [liveRoute, { location: '/proxied', upstreams: [{ name: 'up', url: `${upstream.url}/echo` }], server: { name: 'proxied', version: '1' } }],
  }, 2, 60_000)
  const admin = String((await gateway.logged((line) => line.msg === 'admin API and dashboard listening')).url)
  const live = `${gateway.url}/live`
  const pids = new Set<number>()
  const sessions: string[] = []
  for (let i = 0; i < 6; i++) sessions.push(await session(live))
  let calls = 0
  for (const id of sessions) {
    for (let n = 0; n < 3; n++) {
      const answer = await rpc(live, id, { jsonrpc: '2.0', id: 10 + n, method: 'tools/call', params: { name: 'whoami' } })
      pids.add(JSON.parse(answer.message.result.content[0].text).pid)
      calls++
    }
  }
  t.equal(pids.size, 2, 'the calls were served by both workers')
  const bad = await rpc(live, sessions[0], { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'no-such-tool-<script>' } })
  t.ok(bad.message.error, 'an unknown tool is an error')
  const proxied = `${gateway.url}/proxied`
  const proxySession = await session(proxied)
  const echoed = await rpc(proxied, proxySession, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'via proxy' } } })
  t.match(echoed.message.result.content[0].text, /via proxy/)

  const overview = await get(admin, '/api/overview')
  t.equal(overview.workers.length, 2, 'both workers answered')
  t.same(overview.generations, [0])
  t.match(overview.digest, /^[0-9a-f]{16}$/)
  t.equal(overview.routes, 2)
  t.ok(overview.calls >= calls + 2, 'the totals count every worker\'s calls')
  t.equal(overview.reload, true)

  const routes = (await get(admin, '/api/routes')).routes
  const liveView = routes.find((route: any) => route.location === '/live')
  t.ok(liveView.tools.some((tool: any) => tool.name === 'whoami' && tool.inputSchema !== undefined), 'a route with its tools and their schemas')
  t.same(routes.find((route: any) => route.location === '/proxied').upstreams, ['up'])

  const stats = await get(admin, '/api/stats')
  const whoami = stats.calls.find((row: any) => row.route === '/live' && row.method === 'tools/call' && row.component === 'whoami')
  t.equal(whoami.calls, calls, 'calls per tool, summed over the workers')
  t.equal(whoami.buckets.reduce((sum: number, n: number) => sum + n, 0), calls, 'and their latency buckets')
  const other = stats.calls.find((row: any) => row.route === '/live' && row.component === '_other')
  t.equal(other.errors.invalid_params, 1, 'the unknown tool under _other, by error kind')
  const viaProxy = stats.calls.find((row: any) => row.route === '/proxied' && row.component === 'echo')
  t.equal(viaProxy.calls, 1)

  const sessionCounts = (await get(admin, '/api/sessions')).sessions
  t.equal(sessionCounts['/live'], 6, 'sessions per route (the shared store)')
  t.equal(sessionCounts['/proxied'], 1)

  const upstreams = (await get(admin, '/api/upstreams')).upstreams
  t.equal(upstreams.length, 1)
  t.match(upstreams[0], { route: '/proxied', name: 'up', transport: 'http', state: 'up', calls: 1 })

  const errors = (await get(admin, '/api/errors')).errors
  const unknown = errors.find((error: any) => error.route === '/live' && error.error === 'invalid_params')
  t.ok(unknown, 'the failed call in the ring')
  t.equal(unknown.component, '_other', 'no client-made name in the ring either')
  t.match(unknown.session, /^[0-9a-f]{16}$/)
  t.not(unknown.session, sessions[0], 'the session is hashed, never its id')
  t.notOk(JSON.stringify(errors).includes(sessions[0]!), 'no session id anywhere')

  // The gateway's own /metrics agree (the cluster's aggregation).
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text()
  t.match(metrics, `mcp_edge_calls_total{route="/live",method="tools/call",component="whoami"} ${calls}`)
  t.match(metrics, 'mcp_edge_upstream_up{route="/proxied",upstream="up"} 1')
  t.match(metrics, 'mcp_edge_upstream_calls_total{route="/proxied",upstream="up"}')

  const reloaded = await fetch(`${admin}/api/reload`, { method: 'POST' })
  t.equal(reloaded.status, 200)
  t.match(await reloaded.json(), { ok: true, detail: /2 of 2 workers reloaded/ })
  t.same((await get(admin, '/api/overview')).generations, [1], 'every worker serves generation 1')

  const page = await fetch(`${admin}/`)
  t.equal(page.status, 200)
  t.match(await page.text(), '<script type="module" src="/assets/app.js">')
  t.equal((await fetch(`${admin}/assets/uPlot.esm.js`)).status, 200, 'uPlot served from the installed package')
  t.equal((await fetch(`${admin}/assets/..%2F..%2Fpackage.json`)).status, 404, 'nothing outside the dashboard')
  t.equal((await fetch(`${admin}/api/nothing`)).status, 404)
})

const source: AdminSource = {
  snapshot: async () => ({ workers: [{ pid: 1, generation: 0 }], digest: '0', url: 'http://127.0.0.1:1', routes: [], upstreams: [], sessions: {}, calls: [], errors: [], buckets: [], at: 0 }),
  reload: async () => ({ ok: true, problems: [] }),
}
const base: AdminConfig = { listen: { host: '127.0.0.1', port: 0 }, token: undefined, jwt: undefined, reload: false, try_it: true }

t.test('on loopback without a credential: only loopback Host and Origin; read-only by default', async (t) => {
  const app = buildAdminApp(base, source)
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/api/overview', headers: { host: '127.0.0.1:9901' } })).statusCode, 200)
  const rebound = await app.inject({ url: '/api/overview', headers: { host: 'evil.example:9901' } })
  t.equal(rebound.statusCode, 403, 'a rebound DNS name is refused')
  t.equal((await app.inject({ url: '/api/overview', headers: { host: '127.0.0.1:9901', origin: 'https://evil.example' } })).statusCode, 403, 'another site\'s page is refused')
  const reload = await app.inject({ method: 'POST', url: '/api/reload', headers: { host: '127.0.0.1' } })
  t.equal(reload.statusCode, 403)
  t.match(reload.json(), { error: { code: -32000, message: /admin\.reload/ } }, 'through the error table')
  const off = buildAdminApp({ ...base, try_it: false }, source)
  t.teardown(() => off.close())
  t.equal((await off.inject({ method: 'POST', url: '/api/try', headers: { host: '127.0.0.1' }, payload: { route: '/mcp', method: 'tools/list' } })).statusCode, 403)
  const app2 = buildAdminApp(base, source)
  t.teardown(() => app2.close())
  t.equal((await app2.inject({ method: 'POST', url: '/api/try', headers: { host: '127.0.0.1' }, payload: { route: '/nowhere', method: 'tools/list' } })).statusCode, 404, 'try-it only on a configured route')
  t.equal((await app2.inject({ method: 'POST', url: '/api/try', headers: { host: '127.0.0.1' }, payload: { route: '/x', arguments: [1] } })).statusCode, 400)
  t.equal((await app2.inject({ method: 'POST', url: '/api/try', headers: { host: '127.0.0.1', 'content-type': 'application/json' }, payload: '{"route": ' })).statusCode, 400, 'a malformed body')
  const failing = buildAdminApp({ ...base, reload: true }, { ...source, reload: async () => ({ ok: false, problems: ['gateway.yaml:3: routes[0].handler: no such file'] }) })
  t.teardown(() => failing.close())
  const refused = await failing.inject({ method: 'POST', url: '/api/reload', headers: { host: '127.0.0.1' } })
  t.equal(refused.statusCode, 409, 'a reload whose check fails')
  t.match(refused.json(), { error: { message: /keeps serving/, data: { problems: ['gateway.yaml:3: routes[0].handler: no such file'] } } })
})

t.test('beyond loopback: the config asks for a credential; a token or an admin JWT opens it', async (t) => {
  t.throws(() => configFromObject({ admin: { listen: '0.0.0.0:9901' }, routes: [liveRoute] }, 'gateway.yaml'), ConfigError)
  try {
    configFromObject({ admin: { listen: '0.0.0.0:9901' }, routes: [liveRoute] }, 'gateway.yaml')
  } catch (error) {
    t.match((error as Error).message, /admin\.listen.*set admin\.token or admin\.jwt/)
  }
  const token = 'a'.repeat(40)
  t.match(configFromObject({ admin: { listen: '0.0.0.0:9901', token }, routes: [liveRoute] }, 'gateway.yaml').admin, { listen: { host: '0.0.0.0', port: 9901 }, reload: false, try_it: true })

  const { publicKey, privateKey } = await generateKeyPair('ES256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }
  const jwks = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })))
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve))
  t.teardown(() => jwks.close())
  const issuer = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`
  const app = buildAdminApp({ ...base, listen: { host: '0.0.0.0', port: 0 }, token, jwt: { issuer, jwks_uri: `${issuer}/jwks`, audience: 'mcp-edge-admin', scope: 'mcp-edge:admin' } }, source)
  t.teardown(() => app.close())
  const sign = (scope: string): Promise<string> => new SignJWT({ scope }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(issuer).setAudience('mcp-edge-admin').setSubject('operator').setExpirationTime('5m').sign(privateKey)
  const asked = async (authorization?: string): Promise<number> => (await app.inject({ url: '/api/overview', headers: { host: 'gateway.internal', ...(authorization === undefined ? {} : { authorization }) } })).statusCode
  const none = await app.inject({ url: '/api/overview', headers: { host: 'gateway.internal' } })
  t.equal(none.statusCode, 401)
  t.match(none.headers['www-authenticate'], /^Bearer/)
  t.equal(await asked(`Bearer ${'b'.repeat(40)}`), 401, 'a wrong token')
  t.equal(await asked(`Bearer ${token}`), 200, 'the token')
  t.equal(await asked(`Bearer ${await sign('mcp-edge:admin other')}`), 200, 'a JWT with the admin scope')
  t.equal(await asked(`Bearer ${await sign('read')}`), 403, 'a JWT without it')
})
