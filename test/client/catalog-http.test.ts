// Every read-side client method against this project's gateway over Streamable HTTP: lists that
// follow nextCursor to the end, prompts, resources, completions, tools, log level, ping.
import t from 'tap'
import { RpcError } from '../../gateway/client/index.ts'
import { catalogRoute, gatewayWith, httpClient, recordingFetch, text } from './harness.ts'

t.test('initialize negotiates 2025-11-25 and reports the server', async (t) => {
  const gateway = await gatewayWith(t, [catalogRoute])
  const seen = recordingFetch()
  const client = await httpClient(t, `${gateway.url}/catalog`, {}, { fetch: seen.fetch, authorization: 'Bearer s3cret' })
  t.equal(client.protocolVersion, '2025-11-25')
  t.match(client.serverInfo, { name: 'catalog', version: '1.0.0' })
  t.ok(client.serverCapabilities?.tools, 'the server declares tools')
  t.ok(client.transport.sessionId, 'the transport holds the session id')
  t.same(seen.methods.slice(0, 2), ['initialize', 'notifications/initialized'])
  t.equal(seen.headers[0]!.get('authorization'), 'Bearer s3cret', 'authorization on initialize')
  t.equal(seen.headers[0]!.get('mcp-session-id'), null, 'no session id before the server issued one')
  t.equal(seen.headers[1]!.get('mcp-session-id'), client.transport.sessionId, 'the session id afterwards')
  t.equal(seen.headers[1]!.get('mcp-protocol-version'), '2025-11-25', 'the negotiated version afterwards')
  t.equal(seen.headers[1]!.get('authorization'), 'Bearer s3cret')
})

t.test('lists follow nextCursor to the end', async (t) => {
  const gateway = await gatewayWith(t, [catalogRoute])
  const seen = recordingFetch()
  const client = await httpClient(t, `${gateway.url}/catalog`, {}, { fetch: seen.fetch })
  const tools = await client.listTools()
  t.same(tools.map((tool) => tool.name), ['echo', 'add', 'wrong_output', 'image', 'fail', 'crash', 'grow'])
  t.equal(seen.methods.filter((method) => method === 'tools/list').length, 3, 'three pages of three')
  t.match(tools[0], { title: 'Echo', annotations: { readOnlyHint: true } })
  const prompts = await client.listPrompts()
  t.same(prompts.map((prompt) => prompt.name), ['greet', 'conversation', 'broken'])
  t.equal(seen.methods.filter((method) => method === 'prompts/list').length, 3, 'one prompt a page')
  const resources = await client.listResources()
  t.same(resources.map((resource) => resource.uri), ['docs://readme', 'docs://logo', 'docs://changelog'])
  t.equal(seen.methods.filter((method) => method === 'resources/list').length, 2)
  const templates = await client.listResourceTemplates()
  t.same(templates.map((template) => template.uriTemplate), ['users://{id}/profile', 'files://{path}'])
})

t.test('prompts, resources and completions', async (t) => {
  const gateway = await gatewayWith(t, [catalogRoute])
  const client = await httpClient(t, `${gateway.url}/catalog`)
  const greeting = await client.getPrompt('greet', { name: 'Ada' })
  t.same(greeting.messages, [{ role: 'user', content: { type: 'text', text: 'Hello, Ada!' } }])
  const conversation = await client.getPrompt('conversation')
  t.equal(conversation.messages.length, 2)

  const readme = await client.readResource('docs://readme')
  t.same(readme.contents, [{ uri: 'docs://readme', mimeType: 'text/plain', text: 'Read me first' }])
  const logo = await client.readResource('docs://logo')
  t.match(logo.contents[0], { uri: 'docs://logo', mimeType: 'image/png', blob: /^iVBOR/ })
  const profile = await client.readResource('users://u7/profile')
  t.same(JSON.parse((profile.contents[0] as { text: string }).text), { id: 'u7' })

  t.match(await client.completePrompt('greet', 'name', 'al'), { values: ['alice', 'albert'] })
  t.match(await client.completePrompt('greet', 'name', 'b', { style: 'warm' }), { values: ['bob'] })
  t.match(await client.completeResource('users://{id}/profile', 'id', 'u'), { values: ['u1', 'u2'] })
})

t.test('tools: results, structured content, isError results, and typed JSON-RPC errors', async (t) => {
  const gateway = await gatewayWith(t, [catalogRoute])
  const client = await httpClient(t, `${gateway.url}/catalog`)
  t.equal(text(await client.callTool('echo', { message: 'hi' })), 'echo: hi')
  t.same((await client.callTool('add', { a: 2, b: 3 })).structuredContent, { sum: 5 })
  const failed = await client.callTool('fail')
  t.equal(failed.isError, true, 'a failing tool is a result, not a throw')

  const unknownTool = await client.callTool('nope').catch((error: unknown) => error)
  t.type(unknownTool, RpcError)
  t.match(unknownTool, { code: -32602, message: /Unknown tool: nope/ })
  const unknownResource = await client.readResource('docs://missing').catch((error: unknown) => error)
  t.type(unknownResource, RpcError)
  t.match(unknownResource, { code: -32002 })
  const unknownPrompt = await client.getPrompt('nope').catch((error: unknown) => error)
  t.type(unknownPrompt, RpcError)

  await client.ping()
  await client.setLogLevel('warning')
  const badLevel = await client.setLogLevel('loud' as 'info').catch((error: unknown) => error)
  t.match(badLevel, { code: -32602 })
})
