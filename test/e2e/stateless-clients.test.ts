// One handler module, two eras: the official v2 client (version negotiation on auto) speaks the
// stateless 2026-07-28 wire, the 1.x client gets a 2025-11-25 session, on the same routes.
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import t from 'tap'
import { DEFAULT_CONFIG_FILE, loadConfig } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { connect, fixture, gatewayWith } from './harness.ts'

interface Closer { teardown(fn: () => unknown): void }

async function modernClient(t: Closer, url: string, capabilities: object = {}, setup?: (client: ClientV2) => void): Promise<ClientV2> {
  const client = new ClientV2({ name: 'v2', version: '2.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } })
  setup?.(client)
  await client.connect(new TransportV2(new URL(url)))
  t.teardown(() => client.close())
  return client
}

const text = (result: { [key: string]: unknown }) => (result.content as { text: string }[])[0]!.text

t.test('the shipped routes serve the v2 client statelessly and the 1.x client with sessions', async (t) => {
  const config = await loadConfig(DEFAULT_CONFIG_FILE)
  config.listen.port = 0
  config.log.level = 'silent'
  for (const route of config.routes) route.options = { ...route.options, step_ms: 5 }
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())

  const modern = await modernClient(t, `${gateway.url}/mcp`)
  t.equal(modern.getProtocolEra(), 'modern', 'negotiated 2026-07-28')
  t.equal(text(await modern.callTool({ name: 'echo', arguments: { message: 'stateless' } })), 'Tool echo: stateless')
  t.ok((await modern.listTools()).tools.some((tool) => tool.name === 'echo'))
  const prompt = await modern.getPrompt({ name: 'echo', arguments: { message: 'x' } })
  t.match(JSON.stringify(prompt.messages), /Please process this message: x/)

  const legacy = await connect(t, `${gateway.url}/mcp`)
  t.equal(text(await legacy.callTool({ name: 'echo', arguments: { message: 'session' } }) as { [key: string]: unknown }), 'Tool echo: session')
  t.equal(await gateway.store.count('/mcp'), 1, 'only the 1.x client holds a session')

  const answers: string[] = []
  const deployer = await modernClient(t, `${gateway.url}/example`, { elicitation: {} }, (client) => {
    client.setRequestHandler('elicitation/create', async (request) => {
      answers.push(String((request.params as { message: string }).message))
      return { action: 'decline' }
    })
  })
  const tools = (await deployer.listTools()).tools.map((tool) => tool.name)
  t.ok(tools.includes('rollback'), 'the example route lists its tools')
  const rollback = await deployer.callTool({ name: 'rollback', arguments: { service: 'payments', environment: 'staging' } })
  t.equal(answers.length, 1, 'the elicitation reached the v2 client as an input request')
  t.match(text(rollback), /declin|nothing/i, 'the handler acted on the answer of the retried round')
})

t.test('an elicitation round trip, a multi-input round and a capability the client lacks', async (t) => {
  const gateway = await gatewayWith(t, [{ location: '/live', handler: fixture('live'), server: { name: 'live', version: '1.0.0' } }])
  const url = `${gateway.url}/live`
  const client = await modernClient(t, url, { elicitation: {}, sampling: {}, roots: {} }, (c) => {
    c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }))
    c.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'hi' } }))
    c.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///r' }] }))
  })
  t.equal(text(await client.callTool({ name: 'ask' })), 'Hello, Ada')
  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'p' } })), 'model m said: hi')
  t.equal(text(await client.callTool({ name: 'roots' })), 'file:///r')
  const progress: number[] = []
  const slow = await client.callTool({ name: 'slow', arguments: { steps: 2 } }, { onprogress: (p: { progress: number }) => progress.push(p.progress) })
  t.equal(text(slow), 'done after 2 steps')
  t.same(progress, [1, 2], 'progress streams on the stateless response')

  const bare = await modernClient(t, url)
  await t.rejects(bare.callTool({ name: 'sample', arguments: { prompt: 'p' } }), { code: -32021 }, 'missing capability is -32021')
})
