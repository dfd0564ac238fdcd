// What a client gets from nginx itself, through the shipped file: a body over the limit, and every
// gateway down. nginx's own answers were HTML pages, which MCP clients show as an unreadable error (the
// SDK quotes the body); the shipped file answers them as JSON-RPC errors with nginx's status, and lets
// a body the gateway refuses reach the gateway, whose 413 names its limit.
import t, { type Test } from 'tap'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { INIT } from '../edge/fixtures/http.ts'
import { freePort } from '../fixtures/waiting.ts'
import { nginxBinary, startNginx } from './nginx-process.ts'

if (nginxBinary === undefined) {
  t.fail('nginx is not installed (.ci/run installs Debian\'s nginx)')
  process.exit(1)
}
t.setTimeout(90_000)

interface Answer { status: number; type: string | undefined; body: string }

/** POSTs `size` bytes of JSON (INIT padded with a string) to nginx with fetch, as the SDK clients do. */
async function postSized(port: number, size: number): Promise<Answer> {
  const padding = Math.max(0, size - JSON.stringify(INIT).length - 20)
  const body = JSON.stringify({ ...INIT, params: { ...INIT.params, pad: 'x'.repeat(padding) } })
  const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  })
  return { status: response.status, type: response.headers.get('content-type') ?? undefined, body: await response.text() }
}

function rpcError(t: Test, answer: Answer, status: number, message: RegExp): void {
  t.equal(answer.status, status)
  t.match(answer.type, /^application\/json/, 'JSON, not an HTML page')
  t.match(JSON.parse(answer.body), { jsonrpc: '2.0', id: null, error: { code: -32000, message } })
}

t.test('a body over the gateway’s body_limit gets the gateway’s JSON-RPC 413 through nginx', async (t) => {
  const gateway = await gatewayWith(t, [{ location: '/mcp', handler: fixture('catalog'), server: { name: 'big', version: '1.0.0' } }], { connections: { max_per_address: 0 } })
  const host = new URL(gateway.url).host
  const nginx = await startNginx(t, [host, host])
  const fits = await postSized(nginx.port, 1024 * 1024)
  t.equal(fits.status, 200, 'a 1 MiB initialize passes')
  rpcError(t, await postSized(nginx.port, 4.5 * 1024 * 1024), 413, /Payload Too Large: the body is over 4194304 bytes/)
  rpcError(t, await postSized(nginx.port, 12 * 1024 * 1024), 413, /Payload Too Large/)
})

t.test('with every gateway down, nginx answers a JSON-RPC error', async (t) => {
  const dead = `127.0.0.1:${await freePort()}`
  const nginx = await startNginx(t, [dead, dead], { waitForHealth: false })
  rpcError(t, await postSized(nginx.port, 200), 502, /no gateway answered/)
})
