/**
 * The audit record in one process, with the official SDK client: a session's calls, a refusal by the
 * access module, an elicitation round, a route that opts into argument values; and the same requests
 * through the hot path and through Fastify's path (`trust_proxy: true`) write the same lines.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'

t.setTimeout(120_000)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const HANDLER = join(ROOT, 'test/fixtures/phases/audit-handler.ts')
const ACCESS = join(ROOT, 'test/fixtures/phases/audit-access.ts')
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'audit', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }

const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-audit-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))

const ROUTES = [
  {
    location: '/guarded',
    server: { name: 'guarded', version: '1.0.0' },
    handler: HANDLER,
    auth: { access: ACCESS },
    rewrite: { tools: { drop_table: { hidden: true } } },
    filter: { redact: true },
    limits: { rate: [{ key: 'principal', tool: 'limited', limit: 1, window: 3600 }] },
  },
  { location: '/open', server: { name: 'open', version: '1.0.0' }, handler: HANDLER, audit_arguments: true },
  // No credential to learn first and no limit keyed by the caller: the hot path serves it.
  { location: '/phased', server: { name: 'phased', version: '1.0.0' }, handler: HANDLER, rewrite: { tools: { drop_table: { hidden: true } } }, filter: { redact: true } },
]

async function auditedGateway(t: Test, file: string, top: object = {}): Promise<Gateway & { url: string }> {
  const gateway = await startGateway(configFromObject({ listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, audit: { file }, ...top, routes: ROUTES }, join(tmp, 'gateway.yaml')))
  t.teardown(() => gateway.close())
  return gateway
}

async function lines(file: string): Promise<Array<Record<string, unknown>>> {
  return (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>)
}

t.test('a session with the SDK client: calls, a refusal by the access module, an elicitation round, argument values where the route opts in', async (t) => {
  const file = join(tmp, 'session.jsonl')
  const gateway = await auditedGateway(t, file)
  const client = new Client({ name: 'audit-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } })
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { ok: true } }))
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/guarded`), { requestInit: { headers: { 'x-user': 'carol' } } })
  await client.connect(transport)
  await client.callTool({ name: 'say', arguments: { text: 'private words' } })
  await t.rejects(client.callTool({ name: 'admin_reset', arguments: { really: 'private yes' } }), /admin_reset is closed/)
  await t.rejects(client.callTool({ name: 'drop_table', arguments: {} }), /Unknown tool: drop_table/)
  t.match(JSON.stringify(await client.callTool({ name: 'ask', arguments: {} })), /accept/)
  await client.callTool({ name: 'limited', arguments: {} })
  t.equal((await client.callTool({ name: 'limited', arguments: {} })).isError, true, 'over the tool\'s limit')
  await transport.terminateSession()
  await client.close()

  const open = new Client({ name: 'audit-test', version: '1.0.0' })
  const openTransport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/open`))
  await open.connect(openTransport)
  await open.callTool({ name: 'say', arguments: { text: 'kept on purpose' } })
  await openTransport.terminateSession()
  await open.close()
  await gateway.close()

  const records = await lines(file)
  const guarded = records.filter((record) => record.route === '/guarded')
  t.same(guarded.map((record) => [record.method, record.component, record.outcome, record.decision, record.message ?? null]), [
    ['tools/call', 'say', 'ok', null, null],
    ['tools/call', 'admin_reset', 'error', 'access', 'admin_reset is closed'],
    ['tools/call', 'drop_table', 'error', 'rewrite', 'Unknown tool: drop_table'],
    ['elicitation/create', 'ask', 'ok', null, 'accept'],
    ['tools/call', 'ask', 'ok', null, null],
    ['tools/call', 'limited', 'ok', null, null],
    ['tools/call', 'limited', 'error', 'rate_limit', 'over a tool\'s rate limit'],
  ], 'one line per call and per round, each refusal with its rule')
  t.ok(guarded.every((record) => record.sub === 'carol' || record.decision === 'access'), 'the principal on every line past the access phase')
  t.ok(guarded.filter((record) => record.decision !== 'access').every((record) => typeof record.session === 'string' && (record.session as string).length === 16), 'the session by its hash')
  t.notMatch(JSON.stringify(guarded), /private/, 'no argument value on a route that did not opt in')
  const [kept] = records.filter((record) => record.route === '/open')
  t.same(kept?.arguments, { text: 'kept on purpose' }, 'audit_arguments: the values themselves')
  t.equal(typeof kept?.arguments_sha256, 'string', 'beside their digest')
})

/** One raw POST (stateless, 2026-07-28) on a fresh connection. */
async function post(url: string, id: number, method: string, params: Record<string, unknown>): Promise<string> {
  const named = (params.name ?? params.uri) as string
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-user': 'dave', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': named },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } }),
  })
  return response.text()
}

t.test('the hot path and Fastify\'s path write the same audit lines', async (t) => {
  const hotFile = join(tmp, 'hot.jsonl')
  const plainFile = join(tmp, 'plain.jsonl')
  const hot = await auditedGateway(t, hotFile)
  const plain = await auditedGateway(t, plainFile, { trust_proxy: true })
  const requests: Array<[string, Record<string, unknown>]> = [
    ['tools/call', { name: 'say', arguments: { text: 'a' } }],
    ['tools/call', { name: 'leak', arguments: {} }],
    ['tools/call', { name: 'admin_reset', arguments: {} }],
    ['tools/call', { name: 'drop_table', arguments: {} }],
    ['tools/call', { name: 'limited', arguments: {} }],
    ['tools/call', { name: 'limited', arguments: {} }],
    ['prompts/get', { name: 'greet' }],
    ['resources/read', { uri: 'memo://public' }],
  ]
  // A rate limit's wait differs by the milliseconds between the two requests.
  const same = (text: string): string => text.replace(/\d+ ms\)/g, 'N ms)').replace(/"retryAfterMs":\d+/g, '"retryAfterMs":N')
  for (const location of ['/guarded', '/phased']) {
    for (const [i, [method, params]] of requests.entries()) {
      t.equal(same(await post(`${hot.url}${location}`, i, method, params)), same(await post(`${plain.url}${location}`, i, method, params)), `${location} ${method} ${String(params.name ?? params.uri)}: the same answer`)
    }
  }
  t.ok(hot.hotPosts.served >= requests.length, 'the hot path served the open route\'s requests')
  await hot.close()
  await plain.close()
  const stable = (records: Array<Record<string, unknown>>): unknown[] => records.map(({ time: _time, duration_ms: _duration, pid: _pid, ...rest }) => rest)
  const fromHot = await lines(hotFile)
  t.equal(fromHot.length, 2 * requests.length, 'one line per request')
  t.same(stable(fromHot), stable(await lines(plainFile)), 'the same lines, time and duration aside')
  t.same(fromHot.map((record) => record.decision), [null, 'filter', 'access', 'rewrite', null, 'rate_limit', null, null, null, 'filter', null, 'rewrite', null, null, null, null])
})
