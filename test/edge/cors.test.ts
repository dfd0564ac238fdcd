// CORS on the MCP path, as a browser on another origin uses it: preflight, then the real request,
// whose Mcp-Session-Id the page must be able to read. Origins not allowed get no CORS header.
import t from 'tap'
import { fixture, gatewayWith } from '../e2e/harness.ts'

// Real sockets and a gateway per file: more than tap's 30 s on a loaded machine.
t.setTimeout(90_000)

const gateway = await gatewayWith(t, [{ location: '/mcp', handler: fixture('catalog'), server: { name: 'cors', version: '1.0.0' }, allowed_origins: ['https://app.example.com'] }])
const url = `${gateway.url}/mcp`
const allowed = 'https://app.example.com'

t.test('a preflight from an allowed origin names what MCP uses', async (t) => {
  const response = await fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin: allowed,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, mcp-protocol-version, mcp-session-id, authorization, mcp-param-region',
    },
  })
  t.equal(response.status, 204)
  t.equal(response.headers.get('access-control-allow-origin'), allowed, 'the origin, not *')
  t.equal(response.headers.get('vary'), 'Origin')
  t.same(response.headers.get('access-control-allow-methods')?.split(', ').sort(), ['DELETE', 'GET', 'POST'])
  const headers = response.headers.get('access-control-allow-headers')!.split(', ')
  for (const name of ['content-type', 'accept', 'authorization', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'mcp-method', 'mcp-name', 'mcp-param-region']) {
    t.ok(headers.includes(name), `allows ${name}`)
  }
  t.ok(Number(response.headers.get('access-control-max-age')) > 0, 'the answer may be cached')
  t.equal(await response.text(), '')
})

t.test('a preflight from an origin not allowed gets 403 and no CORS header', async (t) => {
  const response = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://evil.example.net', 'access-control-request-method': 'POST' } })
  t.equal(response.status, 403)
  for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers']) {
    t.equal(response.headers.get(name), null, `no ${name}`)
  }
  const post = await fetch(url, { method: 'POST', headers: { origin: 'https://evil.example.net', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
  t.equal(post.status, 403, 'and its real request the existing 403')
  t.equal(post.headers.get('access-control-allow-origin'), null)
  await post.text()
})

t.test('the real POST from an allowed origin: the page may read Mcp-Session-Id', async (t) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { origin: allowed, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'web', version: '1' } } }),
  })
  t.equal(response.status, 200)
  t.equal(response.headers.get('access-control-allow-origin'), allowed)
  t.match(response.headers.get('access-control-expose-headers'), /Mcp-Session-Id/)
  const sessionId = response.headers.get('mcp-session-id')!
  t.ok(sessionId)
  await response.text()
  // The hot path writes its answer straight to the socket: the CORS headers are there too.
  const call = await fetch(url, {
    method: 'POST',
    headers: { origin: allowed, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  })
  t.equal(call.status, 200)
  t.equal(call.headers.get('access-control-allow-origin'), allowed)
  t.match(call.headers.get('access-control-expose-headers'), /Mcp-Session-Id/)
  await call.text()
})

t.test('without an Origin (every non-browser client) nothing changes; OPTIONS names the methods', async (t) => {
  const options = await fetch(url, { method: 'OPTIONS' })
  t.equal(options.status, 204)
  t.equal(options.headers.get('allow'), 'GET, POST, DELETE')
  t.equal(options.headers.get('access-control-allow-origin'), null)
  const put = await fetch(url, { method: 'PUT' })
  t.equal(put.status, 405, 'other methods are still 405')
  await put.text()
})
