/**
 * A refused WebSocket upgrade says why where clients can read it (issue 26): the route without the
 * websocket transport answers 404 with a JSON-RPC body and an `MCP-Edge-Error` header naming the
 * reason. What the official SDK's WebSocketClientTransport shows is recorded as it is: it sees only
 * what its WebSocket implementation reports (`ws`: the status; the WHATWG WebSocket of Node 22+ /
 * undici: an empty error or "non-101 status code"), since the WebSocket API exposes nothing of the
 * response to a failed handshake: the header and body are for `ws`, curl and proxies' logs.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js'
import t from 'tap'
import { WebSocket as WsWebSocket } from 'ws'
import { fixture, gatewayWith } from '../e2e/harness.ts'

const server = { name: 'live', version: '1.0.0' }
const routes = [
  { location: '/live', handler: fixture('live'), transports: ['streamable_http', 'websocket'], server },
  { location: '/http', handler: fixture('live'), server },
]
/**
 * The WHATWG WebSocket the SDK finds as a global: Node 22+'s own; on Node 20, undici's (the same
 * implementation, here through a devDependency's dependency), when it can be loaded.
 */
const whatwgWebSocket: unknown = (globalThis as { WebSocket?: unknown }).WebSocket
  ?? await import('undici').then((undici) => undici.WebSocket, () => undefined)
const wsUrl = (url: string, path: string): string => `${url.replace(/^http/, 'ws')}${path}`

/** The refused handshake's status, headers and body, read with `ws` (which exposes them). */
function refusal(url: string, protocol: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WsWebSocket(url, protocol)
    ws.on('open', () => reject(new Error('the upgrade was accepted')))
    ws.on('error', () => undefined)
    ws.on('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString()))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }))
    })
  })
}

/** What the SDK client's connect() rejects with, over the WebSocket implementation `Impl`. */
async function sdkFailure(url: string, Impl: unknown): Promise<string> {
  const global = globalThis as { WebSocket?: unknown }
  const before = global.WebSocket
  global.WebSocket = Impl
  try {
    const client = new Client({ name: 'ws-refused', version: '1.0.0' })
    const failed = await client.connect(new WebSocketClientTransport(new URL(url))).then(() => 'connected', (error: unknown) => error)
    await client.close().catch(() => undefined)
    return failed instanceof Error ? failed.message : String(failed)
  } finally {
    global.WebSocket = before
  }
}

t.test('an upgrade on a route without WebSocket: 404 with the reason in a header and the body', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const refused = await refusal(wsUrl(gateway.url, '/http'), 'mcp')
  t.equal(refused.status, 404)
  t.equal(refused.headers['mcp-edge-error'], 'MCP_EDGE_ROUTE_NOT_FOUND: Not Found: no WebSocket endpoint at /http', 'the reason, readable without parsing the body')
  t.match(JSON.parse(refused.body), { jsonrpc: '2.0', id: null, error: { message: 'Not Found: no WebSocket endpoint at /http' } })

  const odd = await refusal(wsUrl(gateway.url, `/nowhere-${'é'.repeat(3)}-${'x'.repeat(400)}`), 'mcp')
  t.equal(odd.status, 404)
  const header = odd.headers['mcp-edge-error'] as string
  t.ok(header.length <= 256 && /^[\x20-\x7e]+$/.test(header), 'a long or non-ASCII path still makes a valid, bounded header')

  const forbidden = await refusal(wsUrl(gateway.url, '/live'), 'not-mcp')
  t.equal(forbidden.status, 400)
  t.match(forbidden.headers['mcp-edge-error'], /^MCP_EDGE_BAD_UPGRADE: /, 'every refused upgrade names its reason')

  const plain = await fetch(`${gateway.url}/http`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{' })
  t.equal(plain.headers.get('mcp-edge-error'), null, 'an ordinary HTTP refusal does not carry it (its body says why)')
  await plain.text()
})

t.test('what the official SDK WebSocket client shows for the refused upgrade', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const url = wsUrl(gateway.url, '/http')
  t.equal(await sdkFailure(url, WsWebSocket), 'Unexpected server response: 404', 'over ws: the status, no more (ws reports only the status code)')
  t.equal(await sdkFailure(wsUrl(gateway.url, '/live'), WsWebSocket), 'connected', 'control: the same client connects to the websocket route')
  // The WHATWG WebSocket gives a failed handshake's error event nothing of the response: undici 7 an
  // empty TypeError (close 1006), Node 22's bundled one "Received network error or non-101 status code".
  if (whatwgWebSocket === undefined) {
    t.comment('no WHATWG WebSocket on this Node (20 without undici): not checked')
    return
  }
  const whatwg = await sdkFailure(url, whatwgWebSocket)
  t.comment(`the SDK client over undici's WebSocket rejected with: ${JSON.stringify(whatwg)}`)
  t.ok(whatwg === '' || /non-101 status code/.test(whatwg), 'over the WHATWG WebSocket (Node 22+ global, undici): only that the handshake failed; no server answer can reach it')
})
