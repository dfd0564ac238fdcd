// Against the reference server @modelcontextprotocol/server-everything, over stdio and over
// Streamable HTTP: the client interoperates with the official SDK's server side.
import t, { type Test } from 'tap'
import { CancelledError, McpClient, RpcError, StdioTransport, StreamableHttpTransport, type InitializeOptions } from '../../gateway/client/index.ts'
import { everythingOverHttp, everythingServer as everything } from '../fixtures/everything-server.ts'
import { text } from './harness.ts'


function callbacks(asked: string[]): InitializeOptions {
  return {
    roots: [{ uri: 'file:///work', name: 'work' }],
    sampling: (params) => {
      asked.push('sampling')
      return { role: 'assistant', content: { type: 'text', text: `you said: ${(params.messages[0]!.content as { text: string }).text}` }, model: 'echo-model', stopReason: 'endTurn' }
    },
  }
}

/** The same scenario over any transport: lists, tool calls, a resource, prompts, completions, progress, cancellation, sampling, roots. */
async function exercise(t: Test, client: McpClient, asked: string[]): Promise<void> {
  t.match(client.serverInfo, { name: 'mcp-servers/everything' })
  t.equal(client.protocolVersion, '2025-11-25')

  const tools = await client.listTools()
  const names = tools.map((tool) => tool.name)
  for (const name of ['echo', 'get-sum', 'trigger-long-running-operation', 'trigger-sampling-request', 'get-roots-list']) t.ok(names.includes(name), `tool ${name}`)
  t.equal(text(await client.callTool('echo', { message: 'hello' })), 'Echo: hello')
  t.match(text(await client.callTool('get-sum', { a: 2, b: 40 })), /42/)
  const invalid = await client.callTool('get-sum', { a: 'x' }).catch((error: unknown) => error)
  t.ok(invalid instanceof RpcError || (invalid as { isError?: boolean }).isError, 'bad arguments: a JSON-RPC error or an isError result')

  const resources = await client.listResources()
  const document = resources.find((resource) => resource.uri.endsWith('instructions.md'))
  t.ok(document, 'the static documents are listed')
  const read = await client.readResource(document!.uri)
  t.match(read.contents[0], { uri: document!.uri, text: /\S/ })
  const templates = await client.listResourceTemplates()
  t.ok(templates.some((template) => template.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'))
  const dynamic = await client.readResource('demo://resource/dynamic/text/3')
  t.match(dynamic.contents[0], { text: /Resource 3/ })

  const prompts = await client.listPrompts()
  t.ok(prompts.some((prompt) => prompt.name === 'simple-prompt'))
  const simple = await client.getPrompt('simple-prompt')
  t.match(simple.messages[0], { role: 'user', content: { type: 'text', text: 'This is a simple prompt without arguments.' } })
  t.match(await client.completePrompt('completable-prompt', 'department', 'Eng'), { values: ['Engineering'] })
  t.match(await client.completePrompt('completable-prompt', 'name', '', { department: 'Sales' }), { values: ['David', 'Eve', 'Frank'] })
  t.match(await client.completeResource('demo://resource/dynamic/text/{resourceId}', 'resourceId', '7'), { values: ['7'] })

  const progress: number[] = []
  await client.callTool('trigger-long-running-operation', { duration: 0.3, steps: 3 }, { onProgress: (value) => void progress.push(value) })
  t.same(progress, [1, 2, 3], 'progress notifications')
  const cancelled = await client.callTool('trigger-long-running-operation', { duration: 5, steps: 50 }, { onProgress: () => false }).catch((error: unknown) => error)
  t.type(cancelled, CancelledError, 'a progress callback cancels')

  t.match(text(await client.callTool('trigger-sampling-request', { prompt: 'ping?', maxTokens: 10 })), /you said: .*ping\?/)
  t.ok(asked.includes('sampling'))
  t.match(text(await client.callTool('get-roots-list')), /file:\/\/\/work/)
  await client.exposeRoots([{ uri: 'file:///elsewhere', name: 'elsewhere' }])
  await client.setLogLevel('error')
  await client.ping()
}

t.test('over stdio', async (t) => {
  const transport = new StdioTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' })
  const client = new McpClient(transport)
  t.teardown(() => client.close())
  const asked: string[] = []
  await client.initialize(callbacks(asked))
  t.ok(transport.pid, 'the server runs')
  await exercise(t, client, asked)
  await client.close()
  t.equal(transport.pid !== undefined && alive(transport.pid), false, 'close() ended the process')
})

t.test('over Streamable HTTP', async (t) => {
  const { port } = await everythingOverHttp(t, 10_000)
  const client = new McpClient(new StreamableHttpTransport({ url: `http://127.0.0.1:${port}/mcp` }))
  t.teardown(() => client.close())
  const asked: string[] = []
  await client.initialize(callbacks(asked))
  t.ok(client.transport.sessionId, 'the server issued a session id')
  await exercise(t, client, asked)
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

