// The core server features end to end, with the official SDK 1.x client over Streamable HTTP.
import t from 'tap'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { connect, fixture, gatewayWith } from './harness.ts'

const route = {
  location: '/catalog',
  handler: fixture('catalog'),
  server: { name: 'catalog', title: 'Catalog', version: '2.0.0', instructions: 'Use the catalog.' },
  pagination: { tools: 3, prompts: 2, resources: 2 },
}

t.test('initialize: version, server info, capabilities, instructions', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/catalog`)
  t.same(client.getServerVersion(), { name: 'catalog', title: 'Catalog', version: '2.0.0' })
  t.same(client.getServerCapabilities(), {
    tools: { listChanged: true },
    prompts: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    logging: {},
    completions: {},
  })
  t.equal(client.getInstructions(), 'Use the catalog.')
  t.same(await client.ping(), {})
})

t.test('an older client gets its own protocol version', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const response = await fetch(`${gateway.url}/catalog`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old', version: '1' } } }),
  })
  t.equal((await response.json()).result.protocolVersion, '2025-03-26')
  const future = await fetch(`${gateway.url}/catalog`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2099-01-01', capabilities: {} } }),
  })
  t.equal((await future.json()).result.protocolVersion, '2025-11-25', 'an unknown version gets our latest')
})

t.test('tools: paginated list, titles, icons and annotations pass through', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/catalog`)
  const pages: string[][] = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    pages.push(page.tools.map((tool) => tool.name))
    cursor = page.nextCursor
  } while (cursor !== undefined)
  t.same(pages, [['echo', 'add', 'wrong_output'], ['image', 'fail', 'crash'], ['grow']], 'three pages of three')
  const { tools } = await client.listTools()
  const echo = tools.find((tool) => tool.name === 'echo')!
  t.equal(echo.title, 'Echo')
  t.same(echo.annotations, { readOnlyHint: true, idempotentHint: true })
  t.equal(echo.icons?.[0]?.mimeType, 'image/png')
  t.same(echo.inputSchema, { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] })
  await t.rejects(client.listTools({ cursor: 'not-a-cursor' }), { code: -32602 }, 'a bad cursor is -32602')
})

t.test('tools/call: text, structured output, content, errors, validation', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/catalog`)
  t.same(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }), { content: [{ type: 'text', text: 'echo: hi' }] })

  const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })
  t.same(sum.structuredContent, { sum: 5 })
  t.same(sum.content, [{ type: 'text', text: '{"sum":5}' }], 'structured content also as text')

  const invalid = await client.callTool({ name: 'echo', arguments: { message: 42 } })
  t.equal(invalid.isError, true)
  t.match((invalid.content as { text: string }[])[0]!.text, /message/, 'names the wrong field')

  const missing = await client.callTool({ name: 'echo', arguments: {} })
  t.equal(missing.isError, true)
  t.match((missing.content as { text: string }[])[0]!.text, /message/)

  const image = await client.callTool({ name: 'image' })
  t.equal((image.content as { type: string }[])[0]!.type, 'image')

  const failed = await client.callTool({ name: 'fail' })
  t.same(failed, { isError: true, content: [{ type: 'text', text: 'it went wrong on purpose' }] })

  const crashed = await client.callTool({ name: 'crash' })
  t.equal(crashed.isError, true)
  t.notMatch(JSON.stringify(crashed), /at .*\.ts:\d+/, 'no stack trace on the wire')

  const wrongOutput = await client.callTool({ name: 'wrong_output' })
  t.equal(wrongOutput.isError, true, 'output that breaks the output schema is an error result')

  await t.rejects(client.callTool({ name: 'nope' }), { code: -32602 }, 'unknown tool is -32602')
})

t.test('prompts: list, get, arguments, errors', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/catalog`)
  const first = await client.listPrompts()
  t.same(first.prompts.map((prompt) => prompt.name), ['greet', 'conversation'])
  t.ok(first.nextCursor)
  const second = await client.listPrompts({ cursor: first.nextCursor! })
  t.same(second.prompts.map((prompt) => prompt.name), ['broken'])
  t.same(first.prompts[0], {
    name: 'greet',
    title: 'Greeting',
    description: 'Greets someone',
    arguments: [{ name: 'name', description: 'Who', required: true }, { name: 'style', description: 'How' }],
  })

  const greeting = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } })
  t.same(greeting.messages, [{ role: 'user', content: { type: 'text', text: 'Hello, Ada!' } }])
  const conversation = await client.getPrompt({ name: 'conversation' })
  t.equal(conversation.messages.length, 2)
  await t.rejects(client.getPrompt({ name: 'greet', arguments: {} }), { code: -32602 }, 'missing required argument')
  await t.rejects(client.getPrompt({ name: 'unknown' }), { code: -32602 })
  const broken = await client.getPrompt({ name: 'broken' }).catch((error: McpError) => error)
  t.equal((broken as McpError).code, -32603, 'a throwing prompt is -32603')
  t.notMatch((broken as McpError).message, /prompt internals/, 'the internal message stays in the log')
})

t.test('resources: list, templates, read text and blob, not found', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/catalog`)
  const first = await client.listResources()
  t.same(first.resources.map((resource) => resource.uri), ['docs://readme', 'docs://logo'])
  t.same(first.resources[0]!.annotations, { audience: ['user'], priority: 1 }, 'priority clipped to [0, 1]')
  const second = await client.listResources({ cursor: first.nextCursor! })
  t.same(second.resources.map((resource) => resource.uri), ['docs://changelog'])
  t.equal(second.nextCursor, undefined)

  const templates = await client.listResourceTemplates()
  t.same(templates.resourceTemplates.map((template) => template.uriTemplate), ['users://{id}/profile', 'files://{path}'])

  t.same(await client.readResource({ uri: 'docs://readme' }), { contents: [{ uri: 'docs://readme', mimeType: 'text/plain', text: 'Read me first' }] })
  const logo = await client.readResource({ uri: 'docs://logo' })
  t.equal((logo.contents[0] as { blob: string }).blob.length > 0, true)
  t.same(await client.readResource({ uri: 'users://u1/profile' }), {
    contents: [{ uri: 'users://u1/profile', mimeType: 'application/json', text: '{"id":"u1"}' }],
  })
  await t.rejects(client.readResource({ uri: 'users://ghost/profile' }), { code: -32002, data: { uri: 'users://ghost/profile' } })
  await t.rejects(client.readResource({ uri: 'nowhere://x' }), { code: -32002, data: { uri: 'nowhere://x' } })
})

t.test('completion: prompt arguments and template variables', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const client = await connect(t, `${gateway.url}/catalog`)
  const names = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'al' } })
  t.same(names.completion.values, ['alice', 'albert'])
  const ids = await client.complete({ ref: { type: 'ref/resource', uri: 'users://{id}/profile' }, argument: { name: 'id', value: 'u' } })
  t.same(ids.completion.values, ['u1', 'u2'])
  const none = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'style', value: '' } })
  t.same(none.completion.values, [])
})

t.test('switched-off capabilities are not declared and their methods are -32601', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, capabilities: { logging: false, completions: false, prompts: false } }])
  const client = await connect(t, `${gateway.url}/catalog`)
  const capabilities = client.getServerCapabilities()!
  t.equal(capabilities.logging, undefined)
  t.equal(capabilities.completions, undefined)
  t.equal(capabilities.prompts, undefined)
  await t.rejects(client.setLoggingLevel('info'), { code: -32601 })
})

t.test('several routes, each with its own handler and sessions', async (t) => {
  const gateway = await gatewayWith(t, [route, { ...route, location: '/other', server: { name: 'other', version: '1.0.0' } }])
  const a = await connect(t, `${gateway.url}/catalog`)
  const b = await connect(t, `${gateway.url}/other`)
  t.equal(a.getServerVersion()?.name, 'catalog')
  t.equal(b.getServerVersion()?.name, 'other')
  // A session id is only valid on the route that created it.
  const response = await fetch(`${gateway.url}/other`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': (a as unknown as { _transport: { sessionId: string } })._transport.sessionId,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }),
  })
  t.equal(response.status, 404)
})
