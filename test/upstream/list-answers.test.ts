/**
 * Ready answers of aggregated lists (upstream/list-answers.ts): a list a worker made from cached pages
 * alone is kept with its JSON text and sent again with each request's id. In-process gateways, SDK
 * McpServer upstreams that count what they are asked, raw HTTP where the bytes matter.
 *
 * - A warm list is the cold one with the request's own id (numbers, strings that need escaping), the
 *   same on the hot path and on Fastify's; it reads only the upstreams' generations from the store.
 * - An answer holding a private page (a per-user credential) is never sent to another principal; the
 *   caller's scopes are part of the key where the route's scopes filter lists.
 * - It goes when an upstream says list_changed, and when the store's generation moved without any bus
 *   message (another host's drop); a stateless client is told the time left, not the time kept.
 * - A dead upstream: the first call that cannot reach it drops its lists and tells the sessions.
 * - Bounds: answers per route, bytes per route and in the process, answers per principal.
 */
import { createHash, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { decodeJwt } from 'jose'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'
import type { CacheRead } from '../../gateway/store/cache-table.ts'
import { ANSWERS_PER_ROUTE, ListAnswers, type AnswerParts } from '../../gateway/upstream/list-answers.ts'
import { messageText, shareResult } from '../../gateway/wire/message-text.ts'
import { startRedis } from '../store/redis-server.ts'
import { startCountingUpstream } from './fixtures/counting-upstream.ts'

t.setTimeout(90_000)

const VERSION = '2025-11-25'
const KEYS = { alice: 'k-alice-0123456789abcdef', bob: 'k-bob-0123456789abcdef', carol: 'k-carol-0123456789abcdef' }
const SCOPES: Record<keyof typeof KEYS, string[]> = { alice: [], bob: [], carol: ['admin'] }
const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-list-answers-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const keysFile = path.join(folder, 'keys.yaml')
writeFileSync(keysFile, `keys:\n${Object.entries(KEYS).map(([principal, key]) => `  - sha256: ${createHash('sha256').update(key).digest('hex')}\n    principal: ${principal}\n    scopes: ${JSON.stringify(SCOPES[principal as keyof typeof KEYS])}\n`).join('')}`)
const signingKey = path.join(folder, 'assertion.pem')
writeFileSync(signingKey, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }))

const three = [await startCountingUpstream(t, 'u1'), await startCountingUpstream(t, 'u2'), await startCountingUpstream(t, 'u3')]
const perUser = await startCountingUpstream(t, 'who', (request) => {
  const bearer = String(request.headers.authorization ?? '')
  return bearer.startsWith('Bearer ') ? String(decodeJwt(bearer.slice(7)).sub) : undefined
})
const scoped = await startCountingUpstream(t, 'scoped')
const mortal = [await startCountingUpstream(t, 'm1'), await startCountingUpstream(t, 'm2')]

const routes = [
  { location: '/three', server: { name: 'three', version: '1.0.0' }, capabilities: { tools: { list_changed: true } }, cache: { ttl_ms: 600_000, scope: 'public' }, upstreams: three.map((upstream, i) => ({ name: `u${i + 1}`, url: upstream.url, health_interval: 3600 })) },
  { location: '/private', server: { name: 'private', version: '1.0.0' }, auth: { api_keys: keysFile }, upstreams: [{ name: 'who', url: perUser.url, auth: { identity_assertion: { audience: 'urn:who', ttl_s: 60 } } }] },
  { location: '/scoped', server: { name: 'scoped', version: '1.0.0' }, auth: { api_keys: keysFile }, scopes: { tools: { write: ['admin'] } }, upstreams: [{ name: 'scoped', url: scoped.url }] },
  { location: '/mortal', server: { name: 'mortal', version: '1.0.0' }, capabilities: { tools: { list_changed: true } }, upstreams: mortal.map((upstream, i) => ({ name: `m${i + 1}`, url: upstream.url, health_interval: 3600 })) },
]

async function gateway(top: object): Promise<Gateway & { url: string }> {
  const started = await startGateway(configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    upstream_identity: { issuer: 'urn:mcp-edge:test', keys: [{ kid: 'k1', file: signingKey }] },
    ...top,
    routes,
  }, '<test>'))
  t.teardown(() => started.close())
  return started
}
// The hot path serves one; with trust_proxy the other's requests all take Fastify's path.
const hot = await gateway({})
const plain = await gateway({ trust_proxy: true })

/** The store reads of a gateway's cache table, as it makes them: how many keys (pages) each asked for. */
function readsOf(gateway: Gateway): number[] {
  const reads: number[] = []
  const table = gateway.store.cache
  const read = table.read.bind(table)
  table.read = (keys: readonly string[], groups: readonly string[]): Promise<CacheRead> => {
    reads.push(keys.length)
    return read(keys, groups)
  }
  return reads
}
const hotReads = readsOf(hot)

interface Answer { status: number; text: string; body: { id?: unknown; result?: Record<string, unknown>; error?: unknown } }

async function post(url: string, message: object | string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': VERSION, ...headers },
    body: typeof message === 'string' ? message : JSON.stringify(message),
  })
  const text = await response.text()
  return { status: response.status, text, body: (text === '' ? {} : JSON.parse(text)) as Answer['body'] }
}

async function session(url: string, key?: string): Promise<Record<string, string>> {
  const auth: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` }
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'answers', version: '1' } } }),
  })
  await response.text()
  const headers = { ...auth, 'mcp-session-id': response.headers.get('mcp-session-id')! }
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)
  return headers
}

const list = async (url: string, headers: Record<string, string>, id: unknown = 1): Promise<Answer> => post(url, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/list","params":{}}`, headers)
const toolNames = (answer: Answer): string[] => ((answer.body.result?.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name).sort()

t.test('a warm list is the cold one with each request\'s own id, on the hot path as on Fastify\'s, and reads no page', async (t) => {
  const ids = [7, 'a "quoted" \\ id é😀\u2028', 2 ** 40, -3, '']
  const warm: Record<string, string[]> = {}
  for (const [name, front] of [['hot', hot], ['plain', plain]] as const) {
    const headers = await session(`${front.url}/three`)
    const cold = await list(`${front.url}/three`, headers)
    t.equal(toolNames(cold).length, 9, `${name}: 3 tools from each of 3 upstreams`)
    // The second list merges the cached pages once more, and keeps the answer it made.
    t.same((await list(`${front.url}/three`, headers, 2)).body.result, cold.body.result)
    const before = hotReads.length
    warm[name] = []
    for (const id of ids) {
      const answer = await list(`${front.url}/three`, headers, id)
      t.equal(answer.status, 200)
      t.same(answer.body, { jsonrpc: '2.0', id, result: cold.body.result }, `${name}: the cold list with id #${ids.indexOf(id)}`)
      t.equal(answer.text, JSON.stringify(answer.body), 'exactly what serialising it makes')
      warm[name]!.push(answer.text)
    }
    if (front === hot) t.same(hotReads.slice(before), ids.map(() => 0), 'each warm list read the generations alone: no page')
  }
  t.same(warm.hot, warm.plain, 'the hot path and Fastify\'s send the same bytes')
  t.same(three.map((upstream) => upstream.count('tools/list')), [2, 2, 2], 'one upstream list per gateway')
  t.ok(hot.hotPosts.served > 0 && plain.hotPosts.served === 0, 'the hot gateway served on its hot path, the other on Fastify\'s')
})

t.test('an answer holding a private page is its principal\'s alone', async (t) => {
  const url = `${hot.url}/private`
  const alice = await session(url, KEYS.alice)
  const bob = await session(url, KEYS.bob)
  for (let i = 0; i < 3; i++) t.same(toolNames(await list(url, alice)), ['lookup', 'mine_alice', 'ping', 'write'], `alice, list ${i + 1}`)
  for (let i = 0; i < 3; i++) t.same(toolNames(await list(url, bob)), ['lookup', 'mine_bob', 'ping', 'write'], `bob, list ${i + 1}: never alice's ready answer`)
  t.same(toolNames(await list(url, alice)), ['lookup', 'mine_alice', 'ping', 'write'], 'alice again: hers')
  t.equal(perUser.count('tools/list'), 2, 'one upstream list per principal')
})

t.test('where scopes filter lists, each set of scopes has its own answer', async (t) => {
  const url = `${hot.url}/scoped`
  const alice = await session(url, KEYS.alice)
  const carol = await session(url, KEYS.carol)
  for (let i = 0; i < 3; i++) t.same(toolNames(await list(url, alice)), ['lookup', 'ping'], `alice (no admin), list ${i + 1}`)
  for (let i = 0; i < 3; i++) t.same(toolNames(await list(url, carol)), ['lookup', 'ping', 'write'], `carol (admin), list ${i + 1}`)
  t.same(toolNames(await list(url, alice)), ['lookup', 'ping'], 'alice again: no write')
  t.equal(scoped.count('tools/list'), 1, 'one upstream list for both: the page is public, the filter is the caller\'s')
})

t.test('an answer goes when its upstream says list_changed, and when the store\'s generation moved without a word on the bus', async (t) => {
  const sdk = new Client({ name: 'answers', version: '1.0.0' })
  await sdk.connect(new StreamableHTTPClientTransport(new URL(`${hot.url}/three`)))
  t.teardown(() => sdk.close())
  const names = async (): Promise<string[]> => (await sdk.listTools()).tools.map((tool) => tool.name)
  const first = await names()
  t.same(await names(), first, 'warm')
  const heard = new Promise<void>((resolve) => sdk.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()))
  three[0]!.addTool('fresh')
  await heard
  t.ok((await names()).includes('u1__fresh'), 'the ready answer went with the page')
  t.ok((await names()).includes('u1__fresh'), 'and the next one is made from the new page')

  // Another host dropped u2's lists; this gateway's bus never heard of it (the store is all they share).
  const asked = three[1]!.count('tools/list')
  await hot.store.cache.drop('l:/three:u2')
  t.ok((await names()).includes('u1__fresh'))
  t.equal(three[1]!.count('tools/list'), asked + 1, 'the generation moved: u2 was asked again, not the kept answer sent')
})

t.test('two hosts on one Redis: a drop on one host refuses the other\'s ready answer, whatever the bus says', async (t) => {
  const redis = await startRedis(t)
  const store = { type: 'redis', url: redis.url, key_prefix: 'answers:' }
  const [hostA, hostB] = [await gateway({ store }), await gateway({ store })]
  const sessionA = await session(`${hostA.url}/three`)
  const sessionB = await session(`${hostB.url}/three`)
  const asked = (): number[] => three.map((upstream) => upstream.count('tools/list'))
  const before = asked()
  const first = toolNames(await list(`${hostA.url}/three`, sessionA))
  for (let i = 0; i < 3; i++) t.same(toolNames(await list(`${hostA.url}/three`, sessionA)), first, `host A, warm list ${i + 1}`)
  for (let i = 0; i < 3; i++) t.same(toolNames(await list(`${hostB.url}/three`, sessionB)), first, `host B, list ${i + 1}, from host A's pages`)
  t.same(asked(), before.map((count) => count + 1), 'each upstream asked once for both hosts')
  // Host A drops u3's lists in the store alone (no bus message): host B's ready answer no longer holds.
  await hostA.store.cache.drop('l:/three:u3')
  t.same(toolNames(await list(`${hostB.url}/three`, sessionB)), first)
  t.same(asked(), [before[0]! + 1, before[1]! + 1, before[2]! + 2], 'host B asked u3 again, and only u3')
})

t.test('a stateless client of a ready answer is told the time left', async (t) => {
  const modern = async (): Promise<Record<string, unknown>> => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const answer = await post(`${hot.url}/three`, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' })
    return answer.body.result!
  }
  const ttls: number[] = []
  for (let i = 0; i < 4; i++) {
    const result = await modern()
    t.equal((result.tools as unknown[]).length, 10)
    ttls.push(result.ttlMs as number)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.ok(ttls.every((ttl, i) => ttl <= 60_000 && (i === 0 || ttl < ttls[i - 1]!)), `each answer's ttlMs is what is left (${ttls.join(', ')})`)
})

t.test('a dead upstream: the first call that cannot reach it drops its lists and tells the sessions', async (t) => {
  const sdk = new Client({ name: 'answers', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${hot.url}/mortal`))
  await sdk.connect(transport)
  t.teardown(() => sdk.close())
  const headers = { 'mcp-session-id': transport.sessionId! }
  for (let i = 0; i < 3; i++) t.equal(toolNames(await list(`${hot.url}/mortal`, headers)).length, 6)
  await mortal[1]!.stop()
  // Until a request fails (or the probe, every health_interval), nothing says it died: the cache still lists it.
  t.equal(toolNames(await list(`${hot.url}/mortal`, headers)).length, 6, 'still listed from the cache')
  const heard = new Promise<void>((resolve) => sdk.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()))
  const call = await sdk.callTool({ name: 'm2__ping', arguments: {} })
  t.equal(call.isError, true, 'the call is an isError result')
  await heard
  const after = await list(`${hot.url}/mortal`, headers)
  t.same(toolNames(after), ['m1__lookup', 'm1__ping', 'm1__write'], 'its tools are gone from the list')
  t.same((after.body.result?._meta as Record<string, unknown>)['mcp-edge/unavailable'], ['m2'], 'and the list says it is unavailable')
})

const parts = (result: object, principal?: string): AnswerParts => ({
  result: result as AnswerParts['result'], names: ['u'], groups: ['g'], generations: [0], local: undefined, expiresAt: Date.now() + 60_000, scope: principal === undefined ? 'public' : 'private', principal,
})
const BIG = { generous: 1 << 30 }

t.test('messageText splices a shared result\'s text: exactly JSON.stringify of the message', async (t) => {
  const result = { tools: [{ name: 'a', description: 'é😀 "q" \\' }], nextCursor: 'c' }
  shareResult(result)
  const ids = [0, 42, -1, Number.MAX_SAFE_INTEGER, 'x', 'quote"and\\back', 'é😀\u2028\n', '']
  // Compared as one list: an id with a line separator in an assertion's name upsets the reporter.
  t.same(ids.map((id) => messageText({ jsonrpc: '2.0', id, result })), ids.map((id) => JSON.stringify({ jsonrpc: '2.0', id, result })), 'numbers, strings that need escaping, the empty string')
  const more = { jsonrpc: '2.0' as const, id: 1, result, extra: true } as never
  t.equal(messageText(more), JSON.stringify(more), 'a message with another member is serialised whole')
  t.throws(() => (result.tools as unknown[]).push({}), TypeError, 'a shared result\'s lists are frozen: a phase cannot change every caller\'s answer')
  t.throws(() => Object.assign(result, { nextCursor: 'd' }), TypeError)
})

t.test('bounds: answers per route, bytes per route, answers per principal, bytes in the process', async (t) => {
  const byCount = new ListAnswers({ routeBytes: BIG.generous, totalBytes: BIG.generous, principalEntries: 1000 })
  let kept = 0
  for (let i = 0; i <= ANSWERS_PER_ROUTE; i++) if (byCount.keep(`k${i}`, parts({ tools: [i] }))) kept++
  t.equal(kept, ANSWERS_PER_ROUTE + 1, 'each one kept, the oldest dropped to make room')
  t.equal(byCount.usage().answers, ANSWERS_PER_ROUTE, `at most ${ANSWERS_PER_ROUTE} answers per route`)
  t.equal(byCount.find('k0', undefined, Date.now()), undefined, 'the oldest went first')
  t.ok(byCount.find(`k${ANSWERS_PER_ROUTE}`, undefined, Date.now()))
  byCount.clear()

  const item = 'x'.repeat(1000)
  const byBytes = new ListAnswers({ routeBytes: 4096, totalBytes: BIG.generous, principalEntries: 1000 })
  for (let i = 0; i < 6; i++) byBytes.keep(`k${i}`, parts({ tools: [item] }))
  t.equal(byBytes.usage().answers, 4, 'four answers of ~1 kB within 4096 bytes')
  t.ok(byBytes.usage().bytes <= 4096)
  t.equal(byBytes.find('k1', undefined, Date.now()), undefined, 'the oldest went')
  t.notOk(byBytes.keep('huge', parts({ tools: ['y'.repeat(5000)] })), 'one answer over the bound alone is not kept')
  byBytes.clear()

  const byPrincipal = new ListAnswers({ routeBytes: BIG.generous, totalBytes: BIG.generous, principalEntries: 2 })
  for (const key of ['a', 'b', 'c']) byPrincipal.keep(key, parts({ tools: [key] }, 'alice'))
  byPrincipal.keep('a', parts({ tools: ['bob'] }, 'bob'))
  byPrincipal.keep('shared', parts({ tools: ['all'] }))
  const now = Date.now()
  t.equal(byPrincipal.find('a', 'alice', now), undefined, 'alice\'s oldest went for her third')
  t.ok(byPrincipal.find('b', 'alice', now) && byPrincipal.find('c', 'alice', now), 'her two newest stay')
  t.same(byPrincipal.find('a', 'bob', now)?.result, { tools: ['bob'] }, 'bob\'s is untouched, and his own')
  t.equal(byPrincipal.find('b', 'bob', now), undefined, 'alice\'s answer is never found for bob')
  t.equal(byPrincipal.find('b', undefined, now), undefined, 'nor for a caller without a principal')
  t.same(byPrincipal.find('shared', 'carol', now)?.result, { tools: ['all'] }, 'a public answer is everyone\'s')
  byPrincipal.clear()

  const held = new ListAnswers({ routeBytes: BIG.generous, totalBytes: BIG.generous, principalEntries: 10 }).usage().inProcess
  const one = new ListAnswers({ routeBytes: BIG.generous, totalBytes: held + 3000, principalEntries: 10 })
  const other = new ListAnswers({ routeBytes: BIG.generous, totalBytes: held + 3000, principalEntries: 10 })
  t.ok(one.keep('a', parts({ tools: [item] })) && one.keep('b', parts({ tools: [item] })))
  t.notOk(other.keep('c', parts({ tools: [item, item] })), 'another route cannot pass the process\'s bound (it drops only its own)')
  t.ok(other.keep('d', parts({ tools: [item] })) === false && one.usage().answers === 2, 'nor evict the first route\'s answers')
  one.clear()
  t.ok(other.keep('d', parts({ tools: [item] })), 'once they are gone, it may keep one')
  t.equal(other.usage().inProcess, held + other.usage().bytes, 'the process counts what every route holds')
  other.clear()
  t.equal(other.usage().inProcess, held)

  const expired = new ListAnswers({ routeBytes: BIG.generous, totalBytes: BIG.generous, principalEntries: 10 })
  expired.keep('old', { ...parts({ tools: [] }), expiresAt: Date.now() - 1 })
  t.equal(expired.find('old', undefined, Date.now()), undefined, 'an expired answer is not found')
  t.equal(expired.usage().answers, 0, 'and goes')
})
