/**
 * The rewrite phase with real peers: the official SDK client, the gateway on loopback, and (for the
 * proxy route) `@modelcontextprotocol/server-everything` as an upstream process. A hidden component is
 * absent from the lists and refused exactly as an unknown one; a renamed one is called by its new name
 * and reaches the original; descriptions, titles and annotations are rewritten; a rewrite module's
 * rules lay over the route's, and its failure is the phase's (a reference, never a crash); a session
 * and a stateless call alike. `mcp-edge check` names a rewrite module that fails to load.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { gatewayWith } from '../client/harness.ts'
import { connect } from '../e2e/harness.ts'
import { everythingOverHttp } from '../fixtures/everything-server.ts'
import { checkRoutes, everythingRoute, ROOT, routeYaml, text } from './phase-peers.ts'

t.setTimeout(120_000)
const HANDLER = join(ROOT, 'test/fixtures/phases/rewrite-handler.ts')
const MODULE = join(ROOT, 'test/fixtures/phases/rewrite.ts')

const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-rewrite-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))

/** The error a promise rejects with, as {code, message} (the SDK's McpError carries both). */
async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise
  } catch (error) {
    const { code, message } = error as { code: number; message: string }
    return { code, message }
  }
  throw new Error('expected a refusal')
}

/** A raw stateless (2026-07-28) request without a session: the other path through the endpoint. */
async function stateless(url: string, id: number, method: string, params: Record<string, unknown>): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const named = params.name ?? params.uri
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(typeof named === 'string' ? { 'mcp-name': named } : {}) },
    body: JSON.stringify({
      jsonrpc: '2.0', id, method,
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
    }),
  })
  const raw = await response.text()
  return JSON.parse(raw.startsWith('{') ? raw : raw.split('\n').find((line) => line.startsWith('data: '))!.slice(6))
}

t.test('a proxy route in front of server-everything: a prompt hidden, a tool renamed and redescribed', async (t) => {
  const { port } = await everythingOverHttp(t, 20_000)
  const gateway = await gatewayWith(t, [everythingRoute(port, {
    rewrite: {
      tools: { echo: { name: 'say_back', description: 'Repeats your message word for word', title: 'Say back', annotations: { readOnlyHint: true } } },
      prompts: { 'simple-prompt': { hidden: true } },
    },
  })])
  const client = await connect(t, `${gateway.url}/everything`)

  const tools = (await client.listTools()).tools
  const sayBack = tools.find((tool) => tool.name === 'say_back')
  t.ok(sayBack, 'the renamed tool is listed under its new name')
  t.equal(sayBack?.description, 'Repeats your message word for word', 'with its new description')
  t.equal(sayBack?.title, 'Say back')
  t.same(sayBack?.annotations, { readOnlyHint: true })
  t.ok(sayBack?.inputSchema.properties?.message, 'its schema is the upstream\'s')
  t.notOk(tools.some((tool) => tool.name === 'echo'), 'the old name is gone from the list')
  t.ok(tools.some((tool) => tool.name === 'get-sum'), 'other tools pass as they came')
  t.equal(text(await client.callTool({ name: 'say_back', arguments: { message: 'hi' } })), 'Echo: hi', 'the new name reaches the upstream\'s echo')

  const unknownTool = await refusal(client.callTool({ name: 'no-such-tool', arguments: {} }))
  const oldName = await refusal(client.callTool({ name: 'echo', arguments: { message: 'hi' } }))
  t.equal(oldName.code, unknownTool.code, 'the old name is refused with the unknown tool\'s code')
  t.equal(oldName.message, unknownTool.message.replace('no-such-tool', 'echo'), 'and its message')

  const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name)
  t.notOk(prompts.includes('simple-prompt'), 'the hidden prompt is not listed')
  t.ok(prompts.includes('args-prompt'), 'the others are')
  const unknownPrompt = await refusal(client.getPrompt({ name: 'no-such-prompt' }))
  const hidden = await refusal(client.getPrompt({ name: 'simple-prompt' }))
  t.equal(hidden.code, unknownPrompt.code, 'the hidden prompt is refused with the unknown prompt\'s code')
  // server-everything words its own "no such prompt" its way ("Prompt X not found"); a name the gateway
  // itself knows nobody offers gets the gateway's answer, the one a handler route gives.
  t.equal(hidden.message, 'MCP error -32602: Unknown prompt: simple-prompt', 'and the gateway\'s own unknown-prompt message')
})

t.test('a handler route: every kind rewritten, a module laid over the rules, a session and a stateless call', async (t) => {
  const gateway = await gatewayWith(t, [{
    location: '/own',
    server: { name: 'own', version: '1.0.0' },
    handler: HANDLER,
    phases: { rewrite: MODULE },
    rewrite: {
      tools: { say: { description: 'Says what you give it' } },
      prompts: { internal: { hidden: true }, greet: { name: 'welcome', title: 'Welcome' } },
      resources: { 'memo://secret': { hidden: true }, 'memo://public': { name: 'memo', description: 'Read me first' } },
      resource_templates: { 'rows://{table}/{id}': { hidden: true } },
    },
  }])
  const url = `${gateway.url}/own`
  const client = await connect(t, url)

  const tools = (await client.listTools()).tools
  t.same(tools.map((tool) => tool.name).sort(), ['crash', 'speak'], 'the module hides drop_table and renames say (its rules replace the route\'s for say)')
  t.equal(text(await client.callTool({ name: 'speak', arguments: { text: 'hi' } })), 'said: hi', 'speak reaches say')
  const unknown = await refusal(client.callTool({ name: 'nope', arguments: {} }))
  for (const name of ['drop_table', 'say']) {
    const refused = await refusal(client.callTool({ name, arguments: { text: 'x' } }))
    t.same(refused, { code: unknown.code, message: unknown.message.replace('nope', name) }, `${name} is refused as unknown`)
  }
  const failed = await refusal(client.callTool({ name: 'crash', arguments: {} }))
  t.equal(failed.code, -32603, 'a module that throws is the phase\'s failure')
  t.match(failed.message, /The route's rewrite phase failed \(ref [\w-]+\)/, 'with a reference')
  t.notMatch(failed.message, /rewrite-password/, 'and none of its internal text')
  t.equal(text(await client.callTool({ name: 'speak', arguments: { text: 'after' } })), 'said: after', 'the route serves on')

  const prompts = (await client.listPrompts()).prompts
  t.same(prompts.map((prompt) => [prompt.name, prompt.title]), [['welcome', 'Welcome']], 'a prompt hidden, one renamed')
  t.match(JSON.stringify((await client.getPrompt({ name: 'welcome' })).messages), /Hello there/)
  const unknownPrompt = await refusal(client.getPrompt({ name: 'nope' }))
  t.same(await refusal(client.getPrompt({ name: 'internal' })), { code: unknownPrompt.code, message: unknownPrompt.message.replace('nope', 'internal') }, 'the hidden prompt is refused as unknown')

  const resources = (await client.listResources()).resources
  t.same(resources.map((resource) => [resource.uri, resource.name, resource.description]), [['memo://public', 'memo', 'Read me first']], 'a resource hidden, one redescribed')
  const unknownResource = await refusal(client.readResource({ uri: 'memo://nothing' }))
  t.same(await refusal(client.readResource({ uri: 'memo://secret' })), unknownResource, 'the hidden resource is refused as unknown')
  t.same((await client.listResourceTemplates()).resourceTemplates, [], 'the hidden template is not listed')
  t.same(await refusal(client.readResource({ uri: 'rows://users/1' })), unknownResource, 'a URI of the hidden template is refused as unknown')
  t.equal(((await client.readResource({ uri: 'memo://public' })).contents[0] as { text: string }).text, 'public text')

  // Without a session: the stateless path of the endpoint takes the same phase.
  const listed = await stateless(url, 1, 'tools/list', {})
  t.same((listed.result?.tools as Array<{ name: string }>).map((tool) => tool.name).sort(), ['crash', 'speak'], 'a stateless list is rewritten')
  const called = await stateless(url, 2, 'tools/call', { name: 'speak', arguments: { text: 'stateless' } })
  t.equal((called.result?.content as Array<{ text: string }>)[0]!.text, 'said: stateless', 'a stateless call by the new name')
  const hiddenCall = await stateless(url, 3, 'tools/call', { name: 'drop_table', arguments: {} })
  const unknownStateless = await stateless(url, 4, 'tools/call', { name: 'nope', arguments: {} })
  t.same(hiddenCall.error, { ...unknownStateless.error, message: unknownStateless.error?.message.replace('nope', 'drop_table') }, 'a stateless call of a hidden tool is refused as unknown')
})

t.test('the config refuses two tools renamed to one name; mcp-edge check names a rewrite module that fails to load', async (t) => {
  const broken = join(tmp, 'broken-rewrite.ts')
  await writeFile(broken, 'throw new Error("cannot start the rewrite")\n')
  const loaded = await checkRoutes(join(tmp, 'gateway.yaml'), routeYaml('/a', HANDLER, `phases: { rewrite: ${JSON.stringify(broken)} }`))
  t.equal(loaded.code, 2, 'exit 2')
  t.match(loaded.stderr, `route /a: ${broken}: cannot load rewrite phase module: cannot start the rewrite`, 'the module and its file')

  const clashed = await checkRoutes(join(tmp, 'clash.yaml'), routeYaml('/a', HANDLER, 'rewrite: { tools: { say: { name: talk }, crash: { name: talk } } }'))
  t.equal(clashed.code, 2)
  t.match(clashed.stderr, /"crash" and "say" are both renamed to "talk"/, 'a rename collision is a config error')
})
