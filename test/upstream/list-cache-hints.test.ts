/**
 * The list cache and 2026-07-28 caching hints. The upstreams are mcp-edge routes that speak only
 * 2026-07-28 (behind a front that refuses the 2025 era) and give their own `ttlMs`/`cacheScope`:
 *
 * - An upstream's short ttlMs wins over the route's ttl_s: its list is asked again once it expires.
 * - A 2026-07-28 client gets the route's hints narrowed by the upstream's (the shorter TTL); a 2025
 *   session client gets no hint fields at all.
 * - An upstream that says `private`, on a route without authentication (no principal), is never
 *   cached, and the client is told `private` though the route itself says public.
 */
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { McpClient, StreamableHttpTransport } from '../../gateway/client/index.ts'
import { gatewayWith } from '../client/harness.ts'
import { statelessOnly, type StatelessOnly } from './fixtures/stateless-only.ts'

t.setTimeout(60_000)
const echo = fileURLToPath(new URL('../../handlers/echo.ts', import.meta.url))
const VERSION = '2026-07-28'

const upstream = await gatewayWith(t, [
  { location: '/pub', handler: echo, server: { name: 'pub', version: '1.0.0' }, cache: { ttl_ms: 400, scope: 'public' } },
  { location: '/priv', handler: echo, server: { name: 'priv', version: '1.0.0' }, cache: { ttl_ms: 60_000, scope: 'private' } },
])
const pub = await statelessOnly(t, `${upstream.url}/pub`)
const priv = await statelessOnly(t, `${upstream.url}/priv`)
const proxy = await gatewayWith(t, [
  { location: '/hinted', server: { name: 'hinted', version: '1.0.0' }, cache: { ttl_ms: 60_000, scope: 'public' }, upstreams: [{ name: 'pub', url: pub.url }] },
  { location: '/private', server: { name: 'private', version: '1.0.0' }, cache: { ttl_ms: 60_000, scope: 'public' }, upstreams: [{ name: 'priv', url: priv.url }] },
])
const lists = (front: StatelessOnly): number => front.log.filter((body) => body.method === 'tools/list').length

let ids = 0
/** One stateless tools/list, as a 2026-07-28 client sends it. */
async function modernList(location: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${proxy.url}${location}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/list' },
    body: JSON.stringify({
      jsonrpc: '2.0', id: ++ids, method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } },
    }),
  })
  const answer = (await response.json()) as { result?: Record<string, unknown>; error?: unknown }
  if (answer.result === undefined) throw new Error(`tools/list failed: ${JSON.stringify(answer.error)}`)
  return answer.result
}

t.test('an upstream\'s ttlMs wins over ttl_s, and narrows what the client is told', async (t) => {
  const first = await modernList('/hinted')
  t.ok((first.tools as unknown[]).length > 0)
  t.equal(first.cacheScope, 'public')
  t.ok(typeof first.ttlMs === 'number' && first.ttlMs <= 400, `ttlMs ${String(first.ttlMs)}: the upstream's 400, not the route's 60000`)
  t.equal(lists(pub), 1)
  const warm = await modernList('/hinted')
  t.equal(lists(pub), 1, 'warm: no upstream call')
  t.ok(typeof warm.ttlMs === 'number' && warm.ttlMs <= (first.ttlMs as number), `a warm answer's TTL is what is left (${String(warm.ttlMs)})`)
  // The upstream said 400 ms: a time-based expiry can only be waited for.
  await new Promise((resolve) => setTimeout(resolve, 500))
  await modernList('/hinted')
  t.equal(lists(pub), 2, 'asked again once the upstream\'s TTL ran out (ttl_s would have kept it 60 s)')
})

t.test('a 2025 session client gets no hint fields', async (t) => {
  const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/hinted` }))
  await client.initialize()
  t.teardown(() => client.close())
  const listed = await client.request('tools/list', {})
  t.ok((listed.tools as unknown[]).length > 0)
  t.equal(listed.ttlMs, undefined)
  t.equal(listed.cacheScope, undefined)
  t.equal(listed.resultType, undefined)
})

t.test('a private upstream list on a route without principals is never kept, and is private downstream', async (t) => {
  const one = await modernList('/private')
  const two = await modernList('/private')
  t.equal(lists(priv), 2, 'each list asked the upstream')
  t.equal(one.cacheScope, 'private', 'the route says public; the upstream\'s private wins')
  t.equal(two.cacheScope, 'private')
})
