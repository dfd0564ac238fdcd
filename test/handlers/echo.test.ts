/**
 * End to end: the embedded default config (config/gateway.yaml, the echo quickstart) served by a real
 * gateway on loopback, driven by the official MCP SDK client over Streamable HTTP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { DEFAULT_CONFIG_FILE, loadConfig } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'

const config = await loadConfig(DEFAULT_CONFIG_FILE)
config.listen = { host: '127.0.0.1', port: 0 }
config.log.level = 'silent'
const gateway = await startGateway(config)
const client = new Client({ name: 'echo-test', version: '1.0.0' })
t.teardown(async () => {
  await client.close()
  await gateway.close()
})
await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)))

t.test('initialize reports the configured server', async (t) => {
  t.match(client.getServerVersion(), { name: 'echo', title: 'Echo', version: '1.0.0' })
  t.match(client.getInstructions(), /echo/)
})

t.test('lists the components', async (t) => {
  const { tools } = await client.listTools()
  t.match(tools, [
    {
      name: 'echo',
      title: 'Echo',
      description: String,
      inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
      annotations: { readOnlyHint: true },
    },
  ])
  const { prompts } = await client.listPrompts()
  t.match(prompts, [{ name: 'echo', arguments: [{ name: 'message', required: true }] }])
  const { resources } = await client.listResources()
  t.match(resources, [{ uri: 'echo://readme', name: 'readme', mimeType: 'text/plain' }])
  const { resourceTemplates } = await client.listResourceTemplates()
  t.match(resourceTemplates, [{ uriTemplate: 'echo://{message}', name: 'echo' }])
})

t.test('calls the tool', async (t) => {
  const result = await client.callTool({ name: 'echo', arguments: { message: 'hi' } })
  t.same(result.content, [{ type: 'text', text: 'Tool echo: hi' }])
  t.notOk(result.isError)
})

t.test('a call with invalid arguments is an error result', async (t) => {
  const result = await client.callTool({ name: 'echo', arguments: {} })
  t.equal(result.isError, true)
})

t.test('gets the prompt', async (t) => {
  const { messages } = await client.getPrompt({ name: 'echo', arguments: { message: 'hi' } })
  t.same(messages, [{ role: 'user', content: { type: 'text', text: 'Please process this message: hi' } }])
})

t.test('reads resources', async (t) => {
  const echoed = await client.readResource({ uri: 'echo://hello' })
  t.match(echoed.contents, [{ uri: 'echo://hello', text: 'Resource echo: hello' }])
  const readme = await client.readResource({ uri: 'echo://readme' })
  t.match(readme.contents, [{ uri: 'echo://readme', mimeType: 'text/plain', text: /echo:\/\// }])
})

t.test('completes the template variable from its prefix', async (t) => {
  const complete = (value: string) =>
    client.complete({ ref: { type: 'ref/resource', uri: 'echo://{message}' }, argument: { name: 'message', value } })
  t.same((await complete('hel')).completion.values, ['hello', 'hello world', 'help'])
  t.same((await complete('good')).completion.values, ['goodbye', 'good morning'])
  t.same((await complete('zzz')).completion.values, [])
})
