/**
 * The official SDK 1.x client's everyday session through a transparent proxy route to the reference
 * server `@modelcontextprotocol/server-everything` over Streamable HTTP: lists, calls, resources,
 * prompts, completion, progress, and the server's sampling, elicitation and roots requests relayed
 * to the client (its capabilities reach the server unstripped: the server registers its
 * sampling and elicitation tools only for clients that declared them).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { gatewayWith } from '../client/harness.ts'
import { everythingOverHttp } from '../fixtures/everything-server.ts'

t.setTimeout(120_000)
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content.map((c) => c.text).join('\n'))

t.test('SDK 1.x client → proxy route → server-everything (Streamable HTTP)', async (t) => {
  const { port } = await everythingOverHttp(t, 20_000)

  const proxy = await gatewayWith(t, [{
    location: '/everything',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'everything', url: `http://127.0.0.1:${port}/mcp`, timeout: 20 }],
    prefix: 'never',
  }])
  const asked: string[] = []
  const client = new Client({ name: 'everyday', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } })
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push('sampling')
    return { role: 'assistant', model: 'echo-model', content: { type: 'text', text: `you said: ${(request.params.messages[0]!.content as { text: string }).text}` } }
  })
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked.push('elicitation')
    return { action: 'accept', content: { name: 'Ada Lovelace' } }
  })
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked.push('roots')
    return { roots: [{ uri: 'file:///work', name: 'work' }] }
  })
  const transport = new StreamableHTTPClientTransport(new URL(`${proxy.url}/everything`))
  await client.connect(transport)
  t.teardown(async () => {
    await transport.terminateSession().catch(() => undefined)
    await client.close()
  })

  const names = (await client.listTools()).tools.map((tool) => tool.name)
  for (const name of ['echo', 'get-sum', 'trigger-long-running-operation', 'trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']) {
    t.ok(names.includes(name), `tool ${name} (as the server exposes it to this client)`)
  }
  t.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'hello' } })), 'Echo: hello')
  t.match(text(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } })), /42/)

  const resources = (await client.listResources()).resources
  t.ok(resources.length > 0, 'resources listed')
  const read = await client.readResource({ uri: resources[0]!.uri })
  t.equal(read.contents[0]!.uri, resources[0]!.uri, 'a resource read through its index')
  const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/3' })
  t.match(JSON.stringify(dynamic.contents[0]), /Resource 3/, 'a template resource')
  t.ok((await client.listPrompts()).prompts.some((prompt) => prompt.name === 'simple-prompt'))
  t.match(JSON.stringify((await client.getPrompt({ name: 'simple-prompt' })).messages), /simple prompt/)
  const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'Eng' } })
  t.same(completion.completion.values, ['Engineering'], 'completion forwarded')

  const progress: number[] = []
  await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) })
  t.same(progress, [1, 2, 3], 'progress relayed with the client’s own token')

  t.match(text(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ping?', maxTokens: 10 } })), /you said: .*ping\?/, 'sampling passthrough')
  t.match(text(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })), /Ada Lovelace/, 'elicitation passthrough')
  t.match(text(await client.callTool({ name: 'get-roots-list', arguments: {} })), /file:\/\/\/work/, 'roots passthrough')
  t.ok(asked.includes('sampling') && asked.includes('elicitation') && asked.includes('roots'), 'the client answered each')
  await client.setLoggingLevel('error')
  await client.ping()
})
