/**
 * The audit record's lines for proxied elicitation and sampling rounds, each naming the upstream that
 * asked: @modelcontextprotocol/server-everything (2025-11-25, over stdio) behind a proxy route, asked
 * by the SDK 1.x client on a session (the gateway asks on the call's stream) and by the v2 client
 * stateless (2026-07-28: the upstream's question parked, passed on as input_required, answered by
 * the retry). One gateway, one upstream pool for the file.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { ElicitRequestSchema, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { connect, gatewayWith } from '../e2e/harness.ts'
import { everythingServer as everything } from '../fixtures/everything-server.ts'
import { eventually } from '../fixtures/waiting.ts'

t.setTimeout(90_000)
const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-audit-rounds-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))
const file = join(tmp, 'audit.jsonl')

const proxy = await gatewayWith(t, [{
  location: '/everything',
  server: { name: 'proxy', version: '1.0.0' },
  upstreams: [{ name: 'everything', command: ['node', everything, 'stdio'], timeout: 20 }],
  prefix: 'never',
}], { audit: { file } })

type Line = Record<string, unknown>
/** The round lines of session clients (`stateless`: of stateless ones), once `count` are written (batched, flushed within log.flush_interval). */
async function rounds(count: number, stateless: boolean): Promise<Line[]> {
  let lines: Line[] = []
  await eventually(async () => {
    const text = await readFile(file, 'utf8').catch(() => '')
    lines = text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Line)
      .filter((line) => line.method !== 'tools/call' && (line.session === null) === stateless)
    return lines.length >= count
  }, 10_000).catch(() => undefined)
  return lines
}

const ANSWER = { role: 'assistant', model: 'echo-model', content: { type: 'text', text: 'pong' } } as const

t.test('a session client (SDK 1.x): each round the upstream asks is a line naming it', async (t) => {
  const client = await connect(t, `${proxy.url}/everything`, { elicitation: { form: {} }, sampling: {} }, (c) => {
    c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada Lovelace' } }))
    c.setRequestHandler(CreateMessageRequestSchema, async () => ANSWER)
  })
  await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })
  await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ping?', maxTokens: 10 } })
  const lines = await rounds(2, false)
  t.same(lines.map((line) => [line.method, line.component, line.upstream, line.message]), [
    ['elicitation/create', 'trigger-elicitation-request', 'everything', 'accept'],
    ['sampling/createMessage', 'trigger-sampling-request', 'everything', null],
  ])
  t.ok(lines.every((line) => line.outcome === 'ok' && typeof line.duration_ms === 'number'), 'answered, with how long the user took')
})

t.test('a stateless client (v2, 2026-07-28) on the 2025 upstream: the question and the answer of each round are lines naming it', async (t) => {
  const client = new ClientV2({ name: 'v2', version: '2.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: 'auto' } })
  client.setRequestHandler('elicitation/create', async () => ({ action: 'decline' }))
  client.setRequestHandler('sampling/createMessage', async () => ANSWER)
  await client.connect(new TransportV2(new URL(`${proxy.url}/everything`)))
  t.teardown(() => client.close())
  t.equal(client.getProtocolEra(), 'modern')
  await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })
  await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ping?', maxTokens: 10 } })
  const lines = await rounds(4, true)
  t.same(lines.map((line) => [line.method, line.component, line.upstream, line.message]), [
    ['elicitation/create', 'trigger-elicitation-request', 'everything', 'input_required'],
    ['elicitation/create', 'trigger-elicitation-request', 'everything', 'decline'],
    ['sampling/createMessage', 'trigger-sampling-request', 'everything', 'input_required'],
    ['sampling/createMessage', 'trigger-sampling-request', 'everything', null],
  ], 'asked (input_required), then answered by the retry')
})
