/**
 * The edges of the downstream HTTP+SSE transport (2024-11-05) on one gateway: a route served by it
 * alone (its own Host/Origin check and CORS), API keys, the per-client and per-route stream bounds,
 * max_sessions counting the streams' sessions, and one principal's POST on another's session. The
 * official SDK's SSEClientTransport is the client where one is needed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { e2eFixture } from '../client/harness.ts'
import { eventually } from '../fixtures/waiting.ts'

const ALICE = 'k-alice-0123456789abcdef'
const BOB = 'k-bob-0123456789abcdef01'
const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-legacy-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const keys = path.join(folder, 'keys.yaml')
const sha = (key: string): string => createHash('sha256').update(key).digest('hex')
writeFileSync(keys, `keys:\n  - sha256: ${sha(ALICE)}\n    principal: alice\n  - sha256: ${sha(BOB)}\n    principal: bob\n`)

const live = e2eFixture('live')
const config = configFromObject({
  listen: { host: '127.0.0.1', port: 0 },
  log: { level: 'silent' },
  limits: { legacy_sse_streams_per_client: 2, legacy_sse_streams: 3 },
  routes: [
    { location: '/old', handler: live, server: { name: 'old', version: '1.0.0' }, transports: ['sse'], auth: { api_keys: keys } },
    { location: '/few', handler: live, server: { name: 'few', version: '1.0.0' }, transports: ['streamable_http', 'sse'], max_sessions: 1 },
    { location: '/gated', handler: live, server: { name: 'gated', version: '1.0.0' }, transports: ['streamable_http', 'sse'], auth: { access: fileURLToPath(new URL('./fixtures/legacy-access.ts', import.meta.url)) } },
  ],
}, '<test>')
const gateway = await startGateway(config)
t.teardown(() => gateway.close())

interface Opened { status: number; endpoint?: string; body?: unknown; close(): void; closed: Promise<void> }

/** A raw GET of a stream: its status, and its endpoint event when it opened. */
async function open(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  const controller = new AbortController()
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal })
  if (response.status !== 200) return { status: response.status, body: await response.json(), close: () => undefined, closed: Promise.resolve() }
  const reader = response.body!.getReader()
  let head = ''
  while (!head.includes('\n\n')) head += new TextDecoder().decode((await reader.read()).value)
  const closed = (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // aborted
    }
  })()
  return { status: 200, endpoint: /event: endpoint\ndata: (\S+)/.exec(head)?.[1], close: () => controller.abort(), closed }
}

const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })

t.test('a route served only by the old transport: the SDK client with an API key, Origin and CORS', async (t) => {
  const client = new Client({ name: 'old-client', version: '1.0.0' })
  await client.connect(new SSEClientTransport(new URL(`${gateway.url}/old/sse`), { requestInit: { headers: bearer(ALICE) } }))
  t.teardown(() => client.close())
  const tools = (await client.listTools()).tools.map((tool) => tool.name)
  t.ok(tools.includes('slow') && tools.includes('sample'), 'the route\'s tools over the old transport')

  t.equal((await open(`${gateway.url}/old/sse`)).status, 401, 'no key: 401, as on the other transports')
  const evil = await open(`${gateway.url}/old/sse`, { ...bearer(ALICE), origin: 'https://evil.example' })
  t.equal(evil.status, 403, 'a foreign Origin: 403')
  const evilPost = await fetch(`${gateway.url}/old/messages?sessionId=x`, { method: 'POST', headers: { ...bearer(ALICE), origin: 'https://evil.example', 'content-type': 'application/json' }, body: '{}' })
  t.equal(evilPost.status, 403, 'and on the POST endpoint')
  const preflight = await fetch(`${gateway.url}/old/messages`, { method: 'OPTIONS', headers: { origin: 'http://localhost', 'access-control-request-method': 'POST' } })
  t.equal(preflight.status, 204, 'a CORS preflight of the POST endpoint is answered')
  t.match(preflight.headers.get('access-control-allow-methods'), /POST/)
  await client.close()
  // Its stream's place is given back when the gateway sees the connection go.
  await eventually(() => [...gateway.endpoints.get('/old')!.live.ids()].length === 0)
})

t.test('stream bounds: per client (429), per route (503), given back when a stream closes', async (t) => {
  const a1 = await open(`${gateway.url}/old/sse`, bearer(ALICE))
  const a2 = await open(`${gateway.url}/old/sse`, bearer(ALICE))
  t.teardown(() => { a1.close(); a2.close() })
  t.same([a1.status, a2.status], [200, 200])
  const a3 = await open(`${gateway.url}/old/sse`, bearer(ALICE))
  t.equal(a3.status, 429, 'alice\'s third stream: 429')
  t.match(a3.body, { error: { code: -32000, message: /legacy_sse_streams_per_client/ } })
  const b1 = await open(`${gateway.url}/old/sse`, bearer(BOB))
  t.teardown(() => b1.close())
  t.equal(b1.status, 200, 'bob has his own bound')
  const b2 = await open(`${gateway.url}/old/sse`, bearer(BOB))
  t.equal(b2.status, 503, 'the route holds legacy_sse_streams (3): 503')
  t.match(b2.body, { error: { message: /legacy_sse_streams\)/ } })

  // Bob POSTs on alice's session: as unknown as one that never existed.
  const stolen = await fetch(`${gateway.url}${a1.endpoint}`, {
    method: 'POST', headers: { ...bearer(BOB), 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 's1', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'bob', version: '1' } } }),
  })
  t.equal(stolen.status, 404, 'another principal\'s session id: 404')
  t.match(await stolen.json(), { id: 's1', error: { code: -32001 } })

  a1.close()
  await a1.closed
  let again: Opened | undefined
  await eventually(async () => {
    again = await open(`${gateway.url}/old/sse`, bearer(ALICE))
    if (again.status !== 200) return false
    return true
  })
  t.teardown(() => again?.close())
  t.pass('a closed stream gives its place back')
})

t.test('max_sessions counts the streams\' sessions; a closed stream ends its session', async (t) => {
  const first = await open(`${gateway.url}/few/sse`)
  t.equal(first.status, 200)
  const second = await open(`${gateway.url}/few/sse`)
  t.equal(second.status, 503, 'the route holds max_sessions (1): the next stream is refused')
  t.match(second.body, { error: { message: /max_sessions/ } })
  const initialize = await fetch(`${gateway.url}/few`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
  })
  t.equal(initialize.status, 503, 'so is a Streamable HTTP initialize: one bound for both transports')
  const reservedId = new URL(first.endpoint!, gateway.url).searchParams.get('sessionId')!
  const borrowed = await fetch(`${gateway.url}/few`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': reservedId, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'r1', method: 'tools/list' }),
  })
  t.equal(borrowed.status, 404, 'the stream\'s reserved session is not a Streamable HTTP session before its initialize')
  t.match(await borrowed.json(), { id: 'r1', error: { code: -32001 } })
  first.close()
  await first.closed
  await eventually(async () => (await fetch(`${gateway.url}${first.endpoint}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
  })).status === 404)
  t.pass('the stream gone, its session is unknown')
  const third = await open(`${gateway.url}/few/sse`)
  t.teardown(() => third.close())
  t.equal(third.status, 200, 'and its place is free')
})

t.test('an access module is told `sse` for the old transport\'s stream and POSTs, `streamable_http` for the other', async (t) => {
  const client = new Client({ name: 'gated-client', version: '1.0.0' })
  await client.connect(new SSEClientTransport(new URL(`${gateway.url}/gated/sse`)))
  t.teardown(() => client.close())
  t.ok((await client.listTools()).tools.length > 0, 'the module let the stream and the POSTs through')
  const modern = await fetch(`${gateway.url}/gated`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
  })
  t.equal(modern.status, 403, 'and refused Streamable HTTP')
  t.match(await modern.json(), { error: { message: /not over streamable_http/ } })
})
