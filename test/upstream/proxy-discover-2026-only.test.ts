/**
 * Issue 25, defect 4: a Python SDK v2 server's `server/discover` lists 2026-07-28 alone, yet it
 * accepts a 2025-11-25 `initialize`. A 2025 session client (the official TypeScript SDK client)
 * through a proxy route in front of such a server (fixtures/discover-2026-only.ts, built on the
 * official SDK) gets an upstream session of its own era: the upstream's elicitation, sampling and
 * roots requests reach it and its answers go back, and the upstream's tools/list_changed reaches it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { gatewayWith } from '../client/harness.ts'
import { eventually } from '../fixtures/waiting.ts'
import { discover2026Only } from './fixtures/discover-2026-only.ts'

t.setTimeout(60_000)
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

t.test('a 2025 session client on a discover-2026-only server that accepts 2025: elicitation, sampling, roots, list_changed', async (t) => {
  const upstream = await discover2026Only(t)
  const proxy = await gatewayWith(t, [{
    location: '/py',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'py', url: upstream.url, timeout: 10 }],
    prefix: 'never',
  }])
  const client = new Client({ name: 'session-client', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } })
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }))
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: 'assistant',
    model: 'test-model',
    content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` },
  }))
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///srv/one' }] }))
  let changed = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++)
  await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/py`)))
  t.teardown(() => client.close())
  t.equal(client.getServerVersion()?.name, 'proxy')

  const tools = (await client.listTools()).tools.map((tool) => tool.name)
  t.ok(['ask', 'sample', 'roots', 'grow'].every((name) => tools.includes(name)), `the upstream's tools are listed (${tools.join(', ')})`)
  t.ok(upstream.discovered >= 1, 'the gateway asked server/discover (2026-07-28 alone)')
  t.same(upstream.initialized, ['2025-11-25'], 'and initialized one 2025-11-25 session for this client')

  t.equal(text(await client.callTool({ name: 'ask' })), 'Hello, Grace', 'elicitation reached the client, its answer the upstream')
  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })), 'model test-model said: echo hi', 'sampling too')
  t.equal(text(await client.callTool({ name: 'roots' })), 'file:///srv/one', 'roots/list too')
  const before = changed
  t.equal(text(await client.callTool({ name: 'grow' })), 'grew')
  await eventually(() => changed > before, 5000)
  t.pass('the upstream\'s tools/list_changed reached the client')
  const grown = (await client.listTools()).tools.map((tool) => tool.name)
  t.ok(grown.some((name) => name.startsWith('grown-')), 'and the new tool is listed')
  t.same(upstream.initialized, ['2025-11-25'], 'still one upstream session')
})
