/**
 * The audit record's lines for what the first audit tests left out: requests refused before their
 * body was read (no credential, a bad one, a forbidden Origin, Accept, Content-Type, a body over the
 * limit) write a line with the rule that decided and no method, the same from the hot path as from
 * Fastify's (`trust_proxy: true`), never with the credential; a cached tool result says `cached`; an
 * approved call names its approval. Real gateways on loopback, the official SDK client.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'

t.setTimeout(120_000)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const HANDLER = join(ROOT, 'test/fixtures/phases/audit-handler.ts')
const CACHED = join(ROOT, 'test/registry/fixtures/cached-tools.ts')
const APPROVAL = join(ROOT, 'test/phases/fixtures/approval-tools.ts')
const KEY = 'audit-key-that-must-never-be-written-7f3a'
const BAD_KEY = 'a-wrong-key-that-must-never-be-written-9c2e'
const sha = (text: string): string => createHash('sha256').update(text).digest('hex')

const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-audit-refusals-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))
const keysFile = join(tmp, 'keys.yaml')
await writeFile(keysFile, `keys:\n  - sha256: ${sha(KEY)}\n    principal: alice\n`)

const ROUTES = [
  { location: '/keyed', server: { name: 'keyed', version: '1.0.0' }, handler: HANDLER, auth: { api_keys: keysFile }, allowed_origins: ['https://app.example.com'] },
  { location: '/cached', server: { name: 'cached', version: '1.0.0' }, handler: CACHED, auth: { api_keys: keysFile } },
  { location: '/approved', server: { name: 'approved', version: '1.0.0' }, handler: APPROVAL, approval: { destructive: true, ttl_s: 60 } },
  // alice's key has no scopes: a component scope refuses her once the body names the tool.
  { location: '/scoped', server: { name: 'scoped', version: '1.0.0' }, handler: HANDLER, auth: { api_keys: keysFile }, scopes: { tools: { say: ['speaker'] } } },
]

type Line = Record<string, unknown>

async function auditedGateway(t: Test, file: string, top: object = {}): Promise<Gateway & { url: string }> {
  const gateway = await startGateway(configFromObject({ listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, body_limit: 4096, audit: { file }, ...top, routes: ROUTES }, join(tmp, 'gateway.yaml')))
  t.teardown(() => gateway.close())
  return gateway
}

/** The lines written so far, once `count` are there (the record is written after the answers, batched). */
async function linesOf(file: string, count: number): Promise<Line[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => '')
    const lines = text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Line)
    if (lines.length >= count || Date.now() > deadline) return lines
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** One raw POST (the SDK client would not send these malformed requests); resolves with the status. */
function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers }, agent: false }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode!))
    })
    request.on('error', reject)
    request.end(body)
  })
}

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'audit', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'say', arguments: { text: 'secret words' }, _meta: ENVELOPE } })
const GOOD = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'say', authorization: `Bearer ${KEY}` }

/** Each request refused before its body is read, the status it gets and the rule its line names. */
const REFUSED: Array<{ what: string; headers: Record<string, string>; body?: string; status: number; decision: string }> = [
  { what: 'no credential', headers: { ...GOOD, authorization: '' }, status: 401, decision: 'authentication' },
  { what: 'a bad credential', headers: { ...GOOD, authorization: `Bearer ${BAD_KEY}`, 'mcp-session-id': 'a-session-id' }, status: 401, decision: 'authentication' },
  { what: 'a forbidden Origin', headers: { ...GOOD, origin: 'https://evil.example.com' }, status: 403, decision: 'origin' },
  { what: 'an Accept without SSE', headers: { ...GOOD, accept: 'application/json' }, status: 406, decision: 'media_type' },
  { what: 'a Content-Type not JSON', headers: { ...GOOD, 'content-type': 'text/plain' }, status: 415, decision: 'media_type' },
  { what: 'a body over body_limit', headers: GOOD, body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'say', arguments: { text: 'x'.repeat(5000) } } }), status: 413, decision: 'body_limit' },
]

/** What must be the same between two gateways' lines for the same requests. */
const comparable = (line: Line): Line => ({ ...line, time: undefined, pid: undefined, duration_ms: undefined })

t.test('requests refused before their body is read: one line each, the rule that decided, no method, no credential; the hot path and Fastify\'s alike', async (t) => {
  const hotFile = join(tmp, 'hot.jsonl')
  const fastifyFile = join(tmp, 'fastify.jsonl')
  const hot = await auditedGateway(t, hotFile)
  const fastify = await auditedGateway(t, fastifyFile, { trust_proxy: true })
  for (const gateway of [hot, fastify]) {
    for (const refused of REFUSED) {
      const headers = Object.fromEntries(Object.entries(refused.headers).filter(([, value]) => value !== ''))
      t.equal(await post(`${gateway.url}/keyed`, refused.body ?? CALL, headers), refused.status, refused.what)
    }
  }
  const fromHot = await linesOf(hotFile, REFUSED.length)
  const fromFastify = await linesOf(fastifyFile, REFUSED.length)
  t.equal(fromHot.length, REFUSED.length, 'one line per refused request')
  t.same(fromHot.map((line) => line.decision), REFUSED.map((refused) => refused.decision), 'each names the rule that decided')
  t.ok(fromHot.every((line) => line.route === '/keyed' && line.method === null && line.component === null && line.arguments_sha256 === null && line.outcome === 'error' && line.error === 'refused'), 'no method, no component, no arguments: the body was not read')
  t.ok(fromHot.every((line) => line.sub === null && typeof line.message === 'string' && line.message !== ''), 'no principal, the message the client got')
  t.equal(fromHot[1]!.session, createHash('sha256').update('a-session-id').digest('hex').slice(0, 16), 'a session it named, by its hash')
  t.same(fromHot.map(comparable), fromFastify.map(comparable), 'the hot path writes the lines Fastify\'s path writes')
  t.equal(hot.hotPosts.served, 0, 'none of them was the hot path\'s to serve')
  const text = await readFile(hotFile, 'utf8')
  t.notMatch(text, new RegExp(`${KEY}|${BAD_KEY}|secret words`), 'never the credential, never the arguments')

  // A request that passes all of it writes its usual line, with its method.
  t.equal(await post(`${hot.url}/keyed`, CALL, GOOD), 200)
  const after = await linesOf(hotFile, REFUSED.length + 1)
  t.match(after.at(-1), { method: 'tools/call', component: 'say', sub: 'alice', outcome: 'ok', decision: null })
})

t.test('a component scope refuses a known caller: its line names the caller, from the hot path as from Fastify\'s', async (t) => {
  const hotFile = join(tmp, 'scoped-hot.jsonl')
  const fastifyFile = join(tmp, 'scoped-fastify.jsonl')
  const hot = await auditedGateway(t, hotFile)
  const fastify = await auditedGateway(t, fastifyFile, { trust_proxy: true })
  for (const gateway of [hot, fastify]) t.equal(await post(`${gateway.url}/scoped`, CALL, GOOD), 403, 'refused for the tool\'s scope')
  t.equal(hot.hotPosts.served, 1, 'the hot path answered it')
  const [fromHot] = await linesOf(hotFile, 1)
  const [fromFastify] = await linesOf(fastifyFile, 1)
  t.match(fromHot, { route: '/scoped', method: 'tools/call', component: 'say', sub: 'alice', decision: 'scope', error: 'refused' })
  t.same(comparable(fromHot!), comparable(fromFastify!), 'the hot path writes the line Fastify\'s path writes')
})

t.test('a cached tool result says cached; an approved call names its approval', async (t) => {
  const file = join(tmp, 'cache-approval.jsonl')
  const gateway = await auditedGateway(t, file)
  const cached = new Client({ name: 'audit-cache', version: '1.0.0' })
  await cached.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/cached`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }))
  t.teardown(() => cached.close())
  await cached.callTool({ name: 'lookup', arguments: { q: 'audit' } })
  await cached.callTool({ name: 'lookup', arguments: { q: 'audit' } })

  const approver = new Client({ name: 'audit-approver', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } })
  approver.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { approve: true } }))
  await approver.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/approved`)))
  t.teardown(() => approver.close())
  const deleted = await approver.callTool({ name: 'delete_file', arguments: { path: '/tmp/x' } })
  t.notOk(deleted.isError, 'approved, it ran')

  // 2026-07-28: the approval is an input_required round, its answer comes with the retry.
  const modern = new ClientV2({ name: 'audit-approver-v2', version: '2.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } })
  modern.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { approve: true } }))
  await modern.connect(new TransportV2(new URL(`${gateway.url}/approved`)))
  t.teardown(() => modern.close())
  t.equal(modern.getProtocolEra(), 'modern')
  const modernDeleted = await modern.callTool({ name: 'delete_file', arguments: { path: '/tmp/y' } })
  t.notOk(modernDeleted.isError, 'approved over 2026-07-28, it ran')

  const lines = await linesOf(file, 9)
  const lookups = lines.filter((line) => line.component === 'lookup')
  t.same(lookups.map((line) => line.cached), [false, true], 'the second call was answered from the cache, and says so')
  t.ok(lines.every((line) => typeof line.cached === 'boolean'), 'every line has the field')
  const call = lines.find((line) => line.route === '/approved' && line.method === 'tools/call')
  t.match(call, { component: 'delete_file', outcome: 'ok', decision: 'approval', approval: /^.+$/ }, 'the call names the approval that let it through')
  const round = lines.find((line) => line.route === '/approved' && line.method === 'elicitation/create')
  t.match(round, { component: 'delete_file', message: 'accept' }, 'the approval\'s question is a round of its own')
  const stateless = lines.filter((line) => line.route === '/approved' && line.session === null)
  t.same(stateless.map((line) => [line.method, line.message]), [
    ['elicitation/create', 'input_required'],
    ['tools/call', null],
    ['elicitation/create', 'accept'],
    ['tools/call', null],
  ], 'stateless: the question with the first call, the answer with the retry')
  t.ok(stateless.filter((line) => line.method === 'tools/call').every((line) => line.decision === 'approval' && typeof line.approval === 'string'), 'both calls name the approval')
  t.equal(new Set(stateless.map((line) => line.approval)).size, 1, 'one approval across the two requests')
})
