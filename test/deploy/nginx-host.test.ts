// The shipped nginx file in front of a gateway reached by its public name on a non-default port, as
// compose publishes it (8080:80) and users open it (http://mcp.example.com:8080/mcp). nginx must hand
// the gateway the Host the client used, port and all: the gateway checks it against allowed_origins
// (a listed `name:port` refused a Host without its port: 403 for every request), and builds the
// OAuth challenge's resource_metadata URL from it (without the port, the SDK client fetched the
// metadata from port 80 and its OAuth flow never started).
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { INIT } from '../edge/fixtures/http.ts'
import { nginxBinary, startNginx } from './nginx-process.ts'

if (nginxBinary === undefined) {
  t.fail('nginx is not installed (.ci/run installs Debian\'s nginx)')
  process.exit(1)
}
t.setTimeout(90_000)

const PUBLIC = 'mcp.example.com:8443'
const KEY = 'k-nginx-host-0123456789abcdef'
const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-nginx-host-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const keys = path.join(folder, 'keys.yaml')
writeFileSync(keys, `keys:\n  - sha256: ${createHash('sha256').update(KEY).digest('hex')}\n    principal: ci\n    scopes: [mcp]\n`)

// As deploy/gateway.yaml has it: the proxy trusted, the public name (with its port) allowed.
const gateway = await gatewayWith(t, [{
  location: '/mcp',
  handler: fixture('catalog'),
  server: { name: 'public', version: '1.0.0' },
  allowed_origins: [PUBLIC],
  auth: { api_keys: keys, required_scopes: ['mcp'] },
}], { trust_proxy: ['loopback'], connections: { max_per_address: 0 } })
const upstream = new URL(gateway.url).host
const nginx = await startNginx(t, [upstream, upstream])

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** POSTs through nginx with the Host (and Origin) a browser or client on the public name sends. */
function postAs(host: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const text = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const sent = request({
      host: '127.0.0.1',
      port: nginx.port,
      path: '/mcp',
      method: 'POST',
      headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(text), ...headers },
    }, (response) => {
      let data = ''
      response.setEncoding('utf8').on('data', (chunk: string) => (data += chunk)).on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: data }))
    })
    sent.on('error', reject)
    sent.end(text)
  })
}

t.test('a client on the public name and port passes the Host check through nginx', async (t) => {
  const keyed = await postAs(PUBLIC, INIT, { 'x-api-key': KEY })
  t.equal(keyed.status, 200, 'initialize through nginx', { body: keyed.body })
  t.type(keyed.headers['mcp-session-id'], 'string')
  const browser = await postAs(PUBLIC, INIT, { 'x-api-key': KEY, origin: `http://${PUBLIC}` })
  t.equal(browser.status, 200, 'and from a page on that origin', { body: browser.body })
  const other = await postAs('mcp.example.com:9999', INIT, { 'x-api-key': KEY })
  t.equal(other.status, 403, 'a port that is not listed is still refused')
})

t.test('the OAuth challenge through nginx names the metadata on the public port', async (t) => {
  const anonymous = await postAs(PUBLIC, INIT)
  t.equal(anonymous.status, 401)
  t.match(anonymous.headers['www-authenticate'], `resource_metadata="http://${PUBLIC}/.well-known/oauth-protected-resource/mcp"`)
  t.match(JSON.parse(anonymous.body), { jsonrpc: '2.0', error: { code: -32000 } })
})
