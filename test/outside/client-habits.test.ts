// What clients other than the TypeScript SDK send, found by using the gateway from outside:
//  - the Python SDK (httpx) puts `Content-Type: application/json` on every request, so its DELETE
//    (terminate_session) carries that header and no body: the session must end, not get a 400;
//  - a browser never sends credentials on a CORS preflight: on a protected route the OPTIONS must
//    get its 204 (the access phase applies to the real request), or no web client can ever call;
//  - the SDK's metadata discovery sends MCP-Protocol-Version, so in a browser it preflights the
//    protected resource metadata URL too.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { call, initialize, INIT, post } from '../edge/fixtures/http.ts'

t.setTimeout(90_000)
const KEY = 'k-outside-0123456789abcdef'
const ORIGIN = 'https://app.example.com'
const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-outside-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const keys = path.join(folder, 'keys.yaml')
writeFileSync(keys, `keys:\n  - sha256: ${createHash('sha256').update(KEY).digest('hex')}\n    principal: ci\n    scopes: [mcp]\n`)

const route = { handler: fixture('catalog'), server: { name: 'outside', version: '1.0.0' }, allowed_origins: [ORIGIN] }
const gateway = await gatewayWith(t, [
  { ...route, location: '/open' },
  { ...route, location: '/locked', auth: { api_keys: keys, required_scopes: ['mcp'] } },
])
const PING = { jsonrpc: '2.0', id: 5, method: 'ping' }

t.test('a DELETE with Content-Type: application/json and no body ends the session (the Python SDK)', async (t) => {
  for (const location of ['/open', '/locked']) {
    const url = `${gateway.url}${location}`
    const headers: Record<string, string> = location === '/locked' ? { 'x-api-key': KEY } : {}
    const session = await initialize(url, headers)
    const deleted = await fetch(url, {
      method: 'DELETE',
      headers: { ...headers, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    })
    t.equal(deleted.status, 200, `${location}: the session is deleted`)
    await deleted.arrayBuffer()
    const after = await call(url, session, PING, headers)
    t.equal(after.status, 404, `${location}: and gone afterwards`)
    t.match(await after.json(), { id: 5, error: { code: -32001 } })
  }
  const url = `${gateway.url}/open`
  const session = await initialize(url, {})
  const withBody = await fetch(url, { method: 'DELETE', headers: { 'content-type': 'application/json', 'mcp-session-id': session }, body: '{"jsonrpc":' })
  t.equal(withBody.status, 400, 'a DELETE whose body is there and broken is still a parse error')
  t.match(await withBody.json(), { id: null, error: { code: -32700 } })
})

t.test('a browser preflight on a protected route gets its 204 without credentials', async (t) => {
  const url = `${gateway.url}/locked`
  const preflight = await fetch(url, {
    method: 'OPTIONS',
    headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization, mcp-protocol-version' },
  })
  t.equal(preflight.status, 204, 'the preflight is answered')
  t.equal(preflight.headers.get('access-control-allow-origin'), ORIGIN)
  t.match(preflight.headers.get('access-control-allow-headers'), /authorization/)
  t.equal(preflight.headers.get('www-authenticate'), null, 'no challenge on a preflight')
  t.equal(await preflight.text(), '')

  const anonymous = await post(url, INIT, { origin: ORIGIN })
  t.equal(anonymous.status, 401, 'the real request without a credential is still refused')
  t.match(anonymous.headers.get('www-authenticate'), /resource_metadata=/)
  t.match(anonymous.headers.get('access-control-expose-headers'), /WWW-Authenticate/, 'and the page may read the challenge')
  await anonymous.arrayBuffer()
  const keyed = await post(url, INIT, { origin: ORIGIN, authorization: `Bearer ${KEY}` })
  t.equal(keyed.status, 200, 'with one, it passes')
  await keyed.arrayBuffer()

  const evil = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://evil.example.net', 'access-control-request-method': 'POST' } })
  t.equal(evil.status, 403, 'an origin not allowed is still refused first')
  t.equal(evil.headers.get('access-control-allow-origin'), null)
  await evil.arrayBuffer()
})

t.test('the protected resource metadata answers a browser preflight', async (t) => {
  const url = `${gateway.url}/.well-known/oauth-protected-resource/locked`
  const preflight = await fetch(url, {
    method: 'OPTIONS',
    headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'mcp-protocol-version' },
  })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers.get('access-control-allow-origin'), '*')
  t.match(preflight.headers.get('access-control-allow-headers'), /mcp-protocol-version/i)
  await preflight.arrayBuffer()
  const metadata = await fetch(url, { headers: { origin: ORIGIN, 'mcp-protocol-version': '2025-11-25' } })
  t.equal(metadata.status, 200)
  t.equal(metadata.headers.get('access-control-allow-origin'), '*')
  t.match(await metadata.json(), { resource: `${gateway.url}/locked` })
})
