/**
 * The shared list cache and the result cache across two hosts: two gateway processes on one real
 * Redis, SDK McpServer upstreams that count every request they get, and the official SDK client.
 *
 * - A warm tools/list on a 5-upstream route asks no upstream, on the host that filled the cache and on the other.
 * - An upstream's list_changed (heard on host A) drops its lists for host B too, and B's client hears list_changed.
 * - A TTL runs out: the next list asks the upstream again.
 * - Two principals behind a per-user credential (identity assertion): each lists its own tools; bob's
 *   list never holds alice's tool, though both hosts share one cache. Cached results likewise.
 * - Results of a read-only tool with `cache:` are served from the store; an error result and a tool
 *   that is not read-only never are.
 */
import { createHash, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { decodeJwt } from 'jose'
import t, { type Test } from 'tap'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { startRedis } from '../store/redis-server.ts'
import { startCountingUpstream, type CountingUpstream } from './fixtures/counting-upstream.ts'

t.setTimeout(120_000)

const KEYS = { alice: 'k-alice-0123456789abcdef', bob: 'k-bob-0123456789abcdef' }
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-list-cache-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const keysFile = path.join(folder, 'keys.yaml')
writeFileSync(keysFile, `keys:\n${Object.entries(KEYS).map(([principal, key]) => `  - sha256: ${createHash('sha256').update(key).digest('hex')}\n    principal: ${principal}\n    scopes: []\n`).join('')}`)
const signingKey = path.join(folder, 'assertion.pem')
writeFileSync(signingKey, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }))

const redis = await startRedis(t)
const five: CountingUpstream[] = []
for (const name of ['u1', 'u2', 'u3', 'u4', 'u5']) five.push(await startCountingUpstream(t, name))
const solo = await startCountingUpstream(t, 'solo')
// Lists per caller: the subject of the identity assertion the gateway signs for each principal.
const perUser = await startCountingUpstream(t, 'who', (request) => {
  const bearer = String(request.headers.authorization ?? '')
  return bearer.startsWith('Bearer ') ? String(decodeJwt(bearer.slice(7)).sub) : undefined
})

const config = {
  store: { type: 'redis', url: redis.url, key_prefix: 'lc:' },
  upstream_identity: { issuer: 'urn:mcp-edge:test', keys: [{ kid: 'k1', file: signingKey }] },
  routes: [
    {
      location: '/five',
      server: { name: 'five', version: '1.0.0' },
      capabilities: { tools: { list_changed: true } },
      result_cache: { scope: 'public' },
      upstreams: five.map((upstream, index) => ({
        name: `u${index + 1}`,
        url: upstream.url,
        ...(index === 0 ? { tools: { lookup: { cache: { ttl_s: 60 } }, write: { cache: { ttl_s: 60 } } } } : {}),
      })),
    },
    { location: '/short', server: { name: 'short', version: '1.0.0' }, list_cache: { ttl_s: 1 }, upstreams: [{ name: 'solo', url: solo.url }] },
    {
      location: '/private',
      server: { name: 'private', version: '1.0.0' },
      auth: { api_keys: keysFile },
      upstreams: [{ name: 'who', url: perUser.url, auth: { identity_assertion: { audience: 'urn:who', ttl_s: 60 } }, tools: { lookup: { cache: { ttl_s: 60 } } } }],
    },
  ],
}
const [hostA, hostB] = await Promise.all([startGatewayProcess(t, config), startGatewayProcess(t, config)])

async function client(t: Test, url: string, key?: string): Promise<Client> {
  const sdk = new Client({ name: 'list-cache', version: '1.0.0' })
  const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` }
  await sdk.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  t.teardown(() => sdk.close())
  return sdk
}
const names = async (sdk: Client): Promise<string[]> => (await sdk.listTools()).tools.map((tool) => tool.name).sort()
const listCounts = (): number[] => five.map((upstream) => upstream.count('tools/list'))

t.test('a warm tools/list of 5 upstreams asks none of them, on either host', async (t) => {
  const a = await client(t, `${hostA.url}/five`)
  const b = await client(t, `${hostB.url}/five`)
  const first = await names(a)
  t.equal(first.length, 15, '3 tools from each of 5 upstreams')
  t.same(listCounts(), [1, 1, 1, 1, 1], 'the cold list asked each upstream once')
  t.same(await names(a), first, 'warm on host A')
  t.same(listCounts(), [1, 1, 1, 1, 1], 'and made 0 upstream calls')
  t.same(await names(b), first, 'host B serves the same list')
  t.same(listCounts(), [1, 1, 1, 1, 1], 'from the cache host A filled: 0 upstream calls')

  await t.test('an upstream\'s list_changed drops its lists on both hosts; the client of the other host hears it', async (t) => {
    const heard = new Promise<void>((resolve) => b.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()))
    five[0]!.addTool('fresh')
    await heard
    const after = await names(b)
    t.ok(after.includes('u1__fresh'), 'host B lists the new tool')
    t.same(listCounts(), [2, 1, 1, 1, 1], 'only the upstream that changed was asked again')
    t.same(await names(a), after, 'host A lists it too, from the cache')
    t.same(listCounts(), [2, 1, 1, 1, 1])
  })

  await t.test('a read-only tool with cache: its result is kept for both hosts; errors and other tools are not', async (t) => {
    const one = text(await a.callTool({ name: 'u1__lookup', arguments: { q: 'x' } }))
    t.same(five[0]!.lookups, ['x'])
    t.equal(text(await b.callTool({ name: 'u1__lookup', arguments: { q: 'x' } })), one, 'host B answers from the cache')
    t.equal(text(await a.callTool({ name: 'u1__lookup', arguments: { q: 'x' } })), one)
    t.same(five[0]!.lookups, ['x'], 'the upstream was called once')
    text(await a.callTool({ name: 'u1__lookup', arguments: { q: 'y' } }))
    t.same(five[0]!.lookups, ['x', 'y'], 'other arguments are another entry')
    for (const host of [a, b]) t.equal((await host.callTool({ name: 'u1__lookup', arguments: { q: 'fail' } })).isError, true)
    t.same(five[0]!.lookups, ['x', 'y', 'fail', 'fail'], 'an isError result is never kept')
    const writes = [text(await a.callTool({ name: 'u1__write', arguments: { q: 'w' } })), text(await a.callTool({ name: 'u1__write', arguments: { q: 'w' } }))]
    t.not(writes[0], writes[1], 'a tool not listed read-only is called every time')
    await hostA.logged((line) => line.tool === 'write' && String(line.msg).includes('read-only'), 5000)
    t.pass('and its cache config is warned about')
  })
})

t.test('a TTL runs out: the next list asks the upstream again', async (t) => {
  const sdk = await client(t, `${hostA.url}/short`)
  await names(sdk)
  await names(sdk)
  t.equal(solo.count('tools/list'), 1, 'warm within the TTL')
  // ttl_s is 1: a time-based expiry can only be waited for.
  await new Promise((resolve) => setTimeout(resolve, 1200))
  await names(sdk)
  t.equal(solo.count('tools/list'), 2, 'asked again once it expired')
})

t.test('a list fetched with a per-user credential is private to its principal, across hosts', async (t) => {
  const alice = await client(t, `${hostA.url}/private`, KEYS.alice)
  const bob = await client(t, `${hostB.url}/private`, KEYS.bob)
  t.same(await names(alice), ['lookup', 'mine_alice', 'ping', 'write'], 'alice sees her tool')
  t.same(await names(bob), ['lookup', 'mine_bob', 'ping', 'write'], 'bob never sees alice\'s list, though it is cached in the store both hosts share')
  t.equal(perUser.count('tools/list'), 2, 'one upstream list per principal')
  const aliceOnB = await client(t, `${hostB.url}/private`, KEYS.alice)
  t.same(await names(aliceOnB), ['lookup', 'mine_alice', 'ping', 'write'], 'alice on host B: her own list')
  t.same(await names(bob), ['lookup', 'mine_bob', 'ping', 'write'])
  t.equal(perUser.count('tools/list'), 2, 'both warm: no upstream call')

  const aliceResult = text(await alice.callTool({ name: 'lookup', arguments: { q: 'r' } }))
  const bobResult = text(await bob.callTool({ name: 'lookup', arguments: { q: 'r' } }))
  t.match(aliceResult, /:alice:/)
  t.match(bobResult, /:bob:/, 'bob\'s call is not answered with alice\'s cached result')
  t.equal(text(await aliceOnB.callTool({ name: 'lookup', arguments: { q: 'r' } })), aliceResult, 'alice on host B gets her cached result')
  t.equal(perUser.lookups.length, 2, 'one upstream call per principal')
})
