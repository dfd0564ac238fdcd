/**
 * The audit record under the cluster: `mcp-edge start` with two workers appending to one audit file, a
 * mixed run of 1,000 calls (each on a fresh connection, so the primary deals them to both workers):
 * answered calls, a result the filter redacted, refusals by a component scope, by the rewrite phase and
 * by a per-tool rate limit. After a clean stop (SIGTERM), the file holds exactly one parseable line per
 * call, none lost, no argument value anywhere, and the rule that decided on every refusal.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { canonicalJson } from '../../gateway/wire/canonical-json.ts'
import { startGatewayProcess } from '../cluster/gateway-process.ts'

t.setTimeout(180_000)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const HANDLER = join(ROOT, 'test/fixtures/phases/audit-handler.ts')
const KEY = 'audit-test-key-of-alice-0123456789'
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'audit', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }

const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-audit-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))
const auditFile = join(tmp, 'audit.jsonl')
const keysFile = join(tmp, 'keys.yaml')
await writeFile(keysFile, JSON.stringify({ keys: [{ sha256: createHash('sha256').update(KEY).digest('hex'), principal: 'alice', scopes: ['basic'] }] }))

const gateway = await startGatewayProcess(t, {
  workers: 2,
  drain_timeout: 5,
  audit: { file: auditFile },
  routes: [{
    location: '/audited',
    server: { name: 'audited', version: '1.0.0' },
    handler: HANDLER,
    auth: { api_keys: keysFile },
    scopes: { tools: { 'admin_*': ['admin'] } },
    limits: { rate: [{ key: 'principal', tool: 'limited', limit: 10, window: 3600 }] },
    rewrite: { tools: { drop_table: { hidden: true } } },
    filter: { redact: true },
  }],
// Two workers loading TypeScript on a busy 2-core machine: an upper limit for their start, not a bound under test.
}, 2, 60_000)

/** One stateless (2026-07-28) request on a fresh connection: the primary deals each to its next worker. */
function call(id: number, method: string, params: Record<string, unknown>): Promise<{ status: number; body: string }> {
  const named = (params.name ?? params.uri) as string
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } })
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${gateway.url}/audited`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': KEY,
        'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': named, 'content-length': Buffer.byteLength(body),
      },
    }, (response) => {
      let text = ''
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: response.statusCode!, body: text }))
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** The mix: [what, how many, request]; 1,000 in all. */
const MIX: Array<[string, number, (i: number) => [string, Record<string, unknown>]]> = [
  ['say', 450, (i) => ['tools/call', { name: 'say', arguments: { text: `argument-value-${i}` } }]],
  ['leak', 50, () => ['tools/call', { name: 'leak', arguments: {} }]],
  ['limited', 100, () => ['tools/call', { name: 'limited', arguments: {} }]],
  ['admin_reset', 100, (i) => ['tools/call', { name: 'admin_reset', arguments: { confirm: `argument-value-admin-${i}` } }]],
  ['drop_table', 100, (i) => ['tools/call', { name: 'drop_table', arguments: { table: `argument-value-table-${i}` } }]],
  ['greet', 100, () => ['prompts/get', { name: 'greet' }]],
  ['memo', 100, () => ['resources/read', { uri: 'memo://public' }]],
]

t.test('1,000 mixed calls over two workers: one line each, none lost on a clean stop', async (t) => {
  const requests: Array<[string, Record<string, unknown>]> = []
  for (const [, count, make] of MIX) for (let i = 0; i < count; i++) requests.push(make(i))
  t.equal(requests.length, 1000)
  // Interleaved, 16 at a time.
  const order = requests.map((_, i) => (i * 7919) % requests.length)
  const statuses = new Map<number, number>()
  for (let start = 0; start < order.length; start += 16) {
    const answers = await Promise.all(order.slice(start, start + 16).map((index) => call(index + 1, ...requests[index]!)))
    for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
  }
  t.same(Object.fromEntries(statuses), { 200: 900, 403: 100 }, 'the scope refusals are 403s, everything else answered')

  t.equal(await gateway.stop('SIGTERM'), 0, 'a clean stop')
  const text = await readFile(auditFile, 'utf8')
  t.ok(text.endsWith('\n'), 'the last line is whole')
  const lines = text.split('\n').slice(0, -1)
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  t.equal(records.length, 1000, 'one line per call, none lost')
  t.equal(new Set(records.map((record) => record.pid)).size, 2, 'both workers wrote to the file')
  t.notMatch(text, /argument-value/, 'no argument value anywhere')
  t.notMatch(text, /AKIAIOSFODNN7EXAMPLE/, 'nor a result')

  const fields = ['time', 'route', 'method', 'component', 'upstream', 'sub', 'iss', 'client_id', 'session', 'decision', 'approval', 'generation', 'outcome', 'error', 'message', 'duration_ms', 'arguments_sha256', 'pid']
  t.ok(records.every((record) => fields.every((field) => field in record)), 'every line has every documented field')
  t.ok(records.every((record) => record.route === '/audited' && record.sub === 'alice' && typeof record.duration_ms === 'number' && !Number.isNaN(Date.parse(record.time as string))), 'route, principal, duration and time on every line')

  const count = (match: (record: Record<string, unknown>) => boolean): number => records.filter(match).length
  t.equal(count((record) => record.component === 'say' && record.outcome === 'ok' && record.decision === null), 450, 'the answered calls: nothing decided')
  t.equal(count((record) => record.component === 'leak' && record.outcome === 'ok' && record.decision === 'filter'), 50, 'a redacted result names the filter')
  t.equal(count((record) => record.component === 'limited' && record.outcome === 'ok'), 10, 'ten calls within the tool\'s limit')
  t.equal(count((record) => record.component === 'limited' && record.error === 'tool_error' && record.decision === 'rate_limit'), 90, 'the rest refused by the rate limit')
  t.equal(count((record) => record.component === 'admin_reset' && record.outcome === 'error' && record.decision === 'scope'), 100, 'the scope refusals')
  t.equal(count((record) => record.method === 'tools/call' && record.outcome === 'error' && record.decision === 'rewrite'), 100, 'the hidden tool, refused by the rewrite phase')
  t.equal(count((record) => record.method === 'prompts/get' && record.outcome === 'ok'), 100)
  t.equal(count((record) => record.method === 'resources/read' && record.outcome === 'ok'), 100)
  const refusals = records.filter((record) => record.outcome === 'error' || record.error !== null)
  t.equal(refusals.length, 290, 'every refusal counted')
  t.ok(refusals.every((record) => typeof record.decision === 'string' && record.decision !== ''), 'the deciding rule present on each refusal')

  const digest = createHash('sha256').update(canonicalJson({ text: 'argument-value-7' })).digest('hex')
  t.ok(records.some((record) => record.component === 'say' && record.arguments_sha256 === digest), 'the arguments by their digest (sha-256 of canonical JSON)')
  t.ok(records.every((record) => !('arguments' in record)), 'no values: the route did not opt in')
})
