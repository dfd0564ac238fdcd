// The gateway's own paths: /metrics behind the same Host check as routes, or only on its own address
// (metrics.listen); /healthz and /readyz open and terse; the start warning for open routes off loopback.
import { request as httpRequest } from 'node:http'
import path from 'node:path'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { openRouteWarning } from '../../gateway/edge/exposure.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { freePort } from '../fixtures/waiting.ts'

const route = { location: '/mcp', handler: path.resolve('handlers/echo.ts'), server: { name: 'echo', version: '1.0.0' } }
/** A GET with any Host header (fetch will not send a chosen Host). */
function get(url: string, host?: string): Promise<{ status: number; text(): Promise<string>; json(): Promise<unknown> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: host === undefined ? {} : { host } }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
        resolve({ status: response.statusCode ?? 0, text: async () => body, json: async () => JSON.parse(body) as unknown })
      })
    })
    request.on('error', reject).end()
  })
}

t.test('/metrics on the gateway port: the Host check of routes', async (t) => {
  const gateway = await startGateway(configFromObject({ listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, metrics: { allowed_hosts: ['metrics.internal'] }, routes: [route] }, '<test>'))
  t.teardown(() => gateway.close())
  t.equal((await get(`${gateway.url}/metrics`)).status, 200)
  t.equal((await get(`${gateway.url}/metrics`, 'metrics.internal')).status, 200, 'a listed host')
  const rebound = await get(`${gateway.url}/metrics`, 'evil.example')
  t.equal(rebound.status, 403, 'a rebinding host is refused')
  t.match(await rebound.json(), { error: { code: -32000 } })
  const health = await get(`${gateway.url}/healthz`, 'evil.example')
  t.equal(health.status, 200, 'health stays open')
  t.same(await health.json(), { status: 'ok' })
  t.same(await (await get(`${gateway.url}/readyz`)).json(), { status: 'ready' })
})

t.test('metrics.listen: /metrics only on its own address', async (t) => {
  const port = await freePort()
  const gateway = await startGateway(configFromObject({ listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, metrics: { listen: { port } }, routes: [route] }, '<test>'))
  t.teardown(() => gateway.close())
  t.equal((await get(`${gateway.url}/metrics`)).status, 404, 'not on the gateway port')
  const own = await get(`http://127.0.0.1:${port}/metrics`)
  t.equal(own.status, 200)
  t.match(await own.text(), /mcp_edge_/)
  t.equal((await get(`http://127.0.0.1:${port}/metrics`, 'evil.example')).status, 403)
})

t.test('the start warning: open routes off loopback only', async (t) => {
  const config = (host: string, auth?: object) => configFromObject({ listen: { host, port: 0 }, routes: [{ ...route, ...(auth === undefined ? {} : { auth }) }, { ...route, location: '/open' }] }, '<test>')
  t.equal(openRouteWarning(config('127.0.0.1')), undefined)
  t.equal(openRouteWarning(config('::1')), undefined)
  t.match(openRouteWarning(config('0.0.0.0')), { host: '0.0.0.0', routes: ['/mcp', '/open'], message: /without auth/ })
  const protectedOne = config('0.0.0.0', { access: 'x.ts' })
  t.same(openRouteWarning(protectedOne)?.routes, ['/open'])
})

t.test('auth config: gateway defaults, route overrides, auth: false, http issuers off loopback refused', async (t) => {
  const jwt = { issuer: 'https://sso.example.com/realms/tools', audience: 'https://mcp.example.com/tools' }
  const config = configFromObject({
    auth: { jwt, required_scopes: ['mcp'] },
    scopes: { tools: { deploy: ['deploy'] } },
    routes: [route, { ...route, location: '/open', auth: false }, { ...route, location: '/own', auth: { access: 'access.ts' }, scopes: {} }],
  }, '/etc/mcp/gateway.yaml')
  const [first, open, own] = config.routes
  t.match(first!.auth, { jwt: { ...jwt, algorithms: ['RS256', 'ES256'], clock_tolerance: 30, principal_claim: 'sub', jwks_cache: 600, jwks_cooldown: 30, token_cache: 10000 }, required_scopes: ['mcp'] })
  t.same(first!.scopes.tools, { deploy: ['deploy'] })
  t.equal(open!.auth, undefined)
  t.same(own!.auth, { jwt: undefined, api_keys: undefined, access: '/etc/mcp/access.ts', required_scopes: [], metadata: {} })
  t.same(own!.scopes.tools, {})
  const insecure = configFromObject({ listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, routes: [{ ...route, auth: { jwt: { issuer: 'http://sso.example.com', audience: 'x' } } }] }, '<test>')
  await t.rejects(startGateway(insecure), /must use https:\/\/ \(http:\/\/ is accepted on loopback only\)/)
  t.throws(() => configFromObject({ routes: [{ ...route, auth: { jwt: { ...jwt, algorithms: ['HS256'] } } }] }, '<test>'))
})
