import t from 'tap'
import { mcp, type Component } from '../../gateway/registry/components.ts'
import { Registry, type ListName } from '../../gateway/registry/registry.ts'
import type { JsonObject } from '../../gateway/wire/mcp-types.ts'
import { JSON_SCHEMA_2020_12 } from '../../handlers/conformance-assets.ts'

const noPages = { pagination: { tools: 0, prompts: 0, resources: 0 } }
const text = () => 'x'

// The conformance fixture's 2020-12 schema ($defs, $anchor, $ref, allOf/anyOf, if/then/else), the one it serves.
const CONFORMANCE_SCHEMA = JSON_SCHEMA_2020_12

// Output schemas typed as plain JsonObjects type nothing, so the string-returning `text` goes with
// them: these tests look at validators and descriptors, not at calls.
const SAME_ID_OUTPUT: JsonObject = { $id: 'urn:example:same', type: 'object' }
const N_OUTPUT: JsonObject = { type: 'object', properties: { n: { type: 'number' } } }

t.test('registration rejects invalid components with a message naming them', async (t) => {
  const registry = new Registry(noPages)
  const cases: Array<[Component, RegExp]> = [
    [mcp.tool('', text), /Invalid tool "": name must be 1-128/],
    [mcp.tool('has space', text), /Invalid tool "has space": name/],
    [mcp.tool('a'.repeat(129), text), /name must be 1-128/],
    [mcp.tool('colon:name', text), /Invalid tool "colon:name"/],
    [mcp.tool('no-callback', undefined as never), /Invalid tool "no-callback": callback must be a function/],
    [mcp.tool('array-schema', text, { inputSchema: { type: 'array' } }), /Invalid tool "array-schema": inputSchema must be an object schema/],
    [mcp.tool('bad-schema', text, { inputSchema: { type: 'object', properties: { a: { type: 'nope' } } } }), /inputSchema does not compile/],
    [mcp.tool('remote-ref', text, { inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } } }), /inputSchema does not compile/],
    [mcp.tool('bad-dialect', text, { inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } }), /unsupported \$schema/],
    [mcp.tool('bad-output', text, { outputSchema: { type: 'string' } }), /Invalid tool "bad-output": outputSchema must be an object schema/],
    [mcp.tool('bad-hint', text, { annotations: { readOnlyHint: 'yes' as never } }), /annotations.readOnlyHint must be a boolean/],
    [mcp.prompt('', text), /Invalid prompt "": name must be a non-empty string/],
    [mcp.prompt('p', text, { arguments: { a: { required: 'yes' as never } } }), /Invalid prompt "p": arguments.a.required must be a boolean/],
    [mcp.prompt('p', text, { completions: { a: 'nope' as never } }), /completions.a must be a function/],
    [mcp.resource('relative/path', 'r', text), /Invalid resource "relative\/path": uri must be an absolute URI/],
    [mcp.resource('test://has space', 'r', text), /uri must be an absolute URI/],
    [mcp.resource('test://r', '', text), /Invalid resource "test:\/\/r": name must be a non-empty string/],
    [mcp.resource('test://r', 'r', text, { size: -1 }), /size must be a non-negative integer/],
    [mcp.resource('test://r', 'r', text, { annotations: { audience: ['robot' as never] } }), /annotations.audience/],
    [mcp.resource('test://r', 'r', text, { annotations: { priority: Number.NaN } }), /annotations.priority must be a number/],
    [mcp.resourceTemplate('test://{unclosed', 't', text), /Invalid resource template "test:\/\/\{unclosed": invalid URI template/],
    [mcp.resourceTemplate('test://{=x}', 't', text), /reserved operator/],
    [mcp.resourceTemplate('{id}/data', 't', text), /does not start with a URI scheme/],
    [mcp.tool('t', text, { title: 3 as never }), /Invalid tool "t": title must be a string/],
    [mcp.tool('t', text, { icons: 'icon.png' as never }), /icons must be an array/],
    [mcp.tool('t', text, { icons: [{ mimeType: 'image/png' } as never] }), /each icon needs a string "src"/],
    [mcp.tool('t', text, { _meta: [] as never }), /_meta must be an object/],
    [mcp.tool('t', text, { annotations: true as never }), /annotations must be an object/],
    [mcp.prompt('p', text, { arguments: [] as never }), /arguments must be an object/],
    [mcp.prompt('p', text, { arguments: { a: 'x' as never } }), /arguments.a must be an object/],
    [mcp.prompt('p', text, { completions: [] as never }), /completions must be an object of functions/],
    [mcp.resource('test://r', 'r', text, { annotations: 'high' as never }), /annotations must be an object/],
    [mcp.resource('test://r', 'r', text, { annotations: { lastModified: 1 as never } }), /annotations.lastModified must be a string/],
    [mcp.resource('test://r', 'r', text, { mimeType: 1 as never }), /mimeType must be a string/],
    [mcp.resourceTemplate(7 as never, 't', text), /uriTemplate must be a string/],
    [{ kind: 'widget', name: 'w' } as unknown as Component, /Invalid component: unknown kind "widget"/],
    [null as unknown as Component, /Invalid component/],
  ]
  for (const [component, message] of cases) t.throws(() => registry.register(component), message)
  t.same(registry.listTools().tools, [], 'nothing was registered')
})

t.test('register is all or nothing', async (t) => {
  const registry = new Registry(noPages)
  let fired = 0
  registry.onChange(() => fired++)
  t.throws(() => registry.register(mcp.tool('good', text), mcp.tool('bad name', text)), /bad name/)
  t.equal(registry.tool('good'), undefined)
  t.equal(fired, 0)
})

t.test('the conformance 2020-12 schema registers, validates and is listed verbatim', async (t) => {
  const registry = new Registry(noPages)
  registry.register(mcp.tool('json_schema_2020_12_tool', text, { description: 'd', inputSchema: CONFORMANCE_SCHEMA }))
  const [listed] = registry.listTools().tools
  t.equal(listed?.inputSchema, CONFORMANCE_SCHEMA, 'the very object the handler gave')
  t.same(JSON.parse(JSON.stringify(listed)), { name: 'json_schema_2020_12_tool', description: 'd', inputSchema: CONFORMANCE_SCHEMA })
  const validate = registry.tool('json_schema_2020_12_tool')!.validateInput
  t.ok(validate({ name: 'a', contactMethod: 'phone', phone: '1' }))
  t.ok(validate({ email: 'e@x', address: { street: 's', city: 'c' } }))
  t.notOk(validate({ contactMethod: 'phone', email: 'e@x' }), 'if/then requires phone')
  t.notOk(validate({ email: 'e', extra: 1 }), 'additionalProperties: false')
  t.notOk(validate({ email: 'e', address: { street: 1 } }), '$ref to $defs')
  t.notOk(validate({ name: 'a' }), 'anyOf phone or email')
})

t.test('draft-07 and dialect-less schemas work, vendor keywords are ignored, shared $id does not clash', async (t) => {
  const registry = new Registry(noPages)
  const plain = { type: 'object', properties: { message: { type: 'string', 'x-mcp-header': 'Message' } }, required: ['message'] }
  const draft07 = { $schema: 'http://json-schema.org/draft-07/schema#', $id: 'urn:example:same', type: 'object', properties: { n: { type: 'integer' } } }
  registry.register(
    mcp.tool('plain', text, { inputSchema: plain }),
    mcp.tool('draft07', text, { inputSchema: draft07 }),
    mcp.tool('same-id', text, { inputSchema: { $id: 'urn:example:same', type: 'object' }, outputSchema: SAME_ID_OUTPUT }),
    mcp.tool('format', text, { inputSchema: { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } } }),
  )
  registry.register(mcp.tool('draft07-again', text, { inputSchema: { ...draft07 } }))
  t.ok(registry.tool('plain')!.validateInput({ message: 'hi' }))
  t.notOk(registry.tool('plain')!.validateInput({}))
  t.notOk(registry.tool('draft07')!.validateInput({ n: 1.5 }))
  t.notOk(registry.tool('draft07-again')!.validateInput({ n: 1.5 }), 'the same $id compiled twice')
  t.notOk(registry.tool('format')!.validateInput({ at: 'yesterday' }), 'ajv-formats is on')
  t.ok(registry.tool('format')!.validateInput({ at: '2025-11-25T10:00:00Z' }))
})

t.test('validators stay valid across many compilations (ajv instances are recycled)', async (t) => {
  const registry = new Registry(noPages)
  const schema = (i: number) => ({ type: 'object', properties: { [`p${i}`]: { type: 'integer' } } })
  for (let i = 0; i < 1200; i++) registry.register(mcp.tool(`tool_${i}`, text, { inputSchema: schema(i) }))
  t.notOk(registry.tool('tool_0')!.validateInput({ p0: 'x' }), 'the first generation still rejects')
  t.ok(registry.tool('tool_0')!.validateInput({ p0: 1 }))
  t.notOk(registry.tool('tool_1199')!.validateInput({ p1199: 1.5 }))
})

t.test('descriptors: defaults, omitted keys, clipped priority, prompt arguments', async (t) => {
  const registry = new Registry(noPages)
  const icons = [{ src: 'https://example.com/i.png' }]
  registry.register(
    mcp.tool('bare', text),
    mcp.tool('full', text, {
      title: 'Full',
      description: 'd',
      inputSchema: { type: 'object' },
      outputSchema: N_OUTPUT,
      annotations: { readOnlyHint: true },
      icons,
      _meta: { k: 1 },
    }),
    mcp.prompt('p', text, {
      description: 'pd',
      arguments: { a: { description: 'first', required: true }, b: {} },
      completions: { a: () => [] },
    }),
    mcp.resource('test://low', 'low', text, { mimeType: 'text/plain', annotations: { priority: -3, audience: ['user'] }, size: 4 }),
    mcp.resource('test://high', 'high', text, { annotations: { priority: 7 } }),
    mcp.resourceTemplate('test://t/{id}', 't', text, { mimeType: 'application/json', annotations: { priority: 0.5 } }),
  )
  const tools = registry.listTools().tools
  t.same(tools[0], { name: 'bare', inputSchema: { type: 'object' } })
  t.same(Object.keys(tools[1]!), ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'icons', '_meta'])
  t.same(registry.listPrompts().prompts, [
    { name: 'p', description: 'pd', arguments: [{ name: 'a', description: 'first', required: true }, { name: 'b' }] },
  ])
  t.same(registry.prompt('p')!.required, ['a'])
  t.same(registry.listResources().resources, [
    { uri: 'test://low', name: 'low', mimeType: 'text/plain', annotations: { priority: 0, audience: ['user'] }, size: 4 },
    { uri: 'test://high', name: 'high', annotations: { priority: 1 } },
  ])
  t.same(registry.listResourceTemplates().resourceTemplates, [
    { uriTemplate: 'test://t/{id}', name: 't', mimeType: 'application/json', annotations: { priority: 0.5 } },
  ])
})

t.test('a duplicate registration is an error naming the component, and changes nothing', async (t) => {
  const registry = new Registry(noPages)
  const first = mcp.tool('a', text, { description: 'first' })
  registry.register(first, mcp.tool('b', text))
  t.throws(() => registry.register(mcp.tool('c', text), mcp.tool('a', text)), {
    code: 'MCP_EDGE_HANDLER_INVALID',
    message: /^duplicate tool "a": already registered on this route \(use replaceTools, or unregisterTool first\)/,
  })
  t.same(registry.listTools().tools.map((tool) => tool.name), ['a', 'b'], 'all or nothing: "c" was not added')
  t.equal(registry.tool('a')!.tool, first, 'the first registration stands')
  t.throws(() => registry.register(mcp.resource('test://r', 'one', text), mcp.resource('test://r', 'two', text)), { message: /^duplicate resource "test:\/\/r": given twice/ })
  t.throws(() => registry.register(mcp.prompt('p', text), mcp.prompt('p', text)), { message: /^duplicate prompt "p"/ })
  registry.register(mcp.resourceTemplate('test://{x}', 't', text))
  t.throws(() => registry.register(mcp.resourceTemplate('test://{x}', 'u', text)), { message: /^duplicate resource template "test:\/\/\{x\}".*replaceResourceTemplates/ })
  t.throws(() => registry.replaceTools([mcp.tool('z', text), mcp.tool('z', text)]), { message: /^duplicate tool "z": given twice/ })
  t.same(registry.listTools().tools.map((tool) => tool.name), ['a', 'b'], 'a refused replace changes nothing')
  // The same name in another kind is no duplicate, and a replace may reuse names.
  registry.register(mcp.prompt('a', text))
  registry.replaceTools([mcp.tool('a', text, { description: 'again' })])
  t.same(registry.listTools().tools.map((tool) => [tool.name, tool.description]), [['a', 'again']])
  t.equal(registry.unregister('tool', 'a'), true)
  registry.register(mcp.tool('a', text))
  t.ok(registry.tool('a'), 'after unregister the name is free again')
})

t.test('replaceResources keeps the templates unless given; replaceResourceTemplates replaces them alone', async (t) => {
  const registry = new Registry(noPages)
  const events: ListName[] = []
  registry.onChange((list) => events.push(list))
  registry.register(mcp.resource('test://a', 'a', text), mcp.resourceTemplate('test://t/{id}', 't', text))
  const uris = () => registry.listResources().resources.map((r) => r.uri)
  const templates = () => registry.listResourceTemplates().resourceTemplates.map((r) => r.uriTemplate)
  registry.replaceResources([mcp.resource('test://b', 'b', text)])
  t.same([uris(), templates()], [['test://b'], ['test://t/{id}']], 'no templates given: they stay')
  registry.replaceResourceTemplates([mcp.resourceTemplate('test://u/{id}', 'u', text)])
  t.same([uris(), templates()], [['test://b'], ['test://u/{id}']], 'templates replaced, resources left alone')
  registry.replaceResources([], [])
  t.same([uris(), templates()], [[], []], 'both given: both replaced')
  t.throws(() => registry.replaceResourceTemplates([mcp.resource('test://c', 'c', text) as never]), { message: /expected template/ })
  t.same(events, ['resources', 'resources', 'resources', 'resources'])
})

t.test('onChange fires once per changed list per call, and can be removed', async (t) => {
  const registry = new Registry(noPages)
  const events: ListName[] = []
  const off = registry.onChange((list) => events.push(list))
  registry.register(mcp.tool('a', text), mcp.tool('b', text))
  t.same(events, ['tools'], 'two tools, one event')
  registry.register(mcp.prompt('p', text), mcp.resourceTemplate('test://{x}', 't', text), mcp.tool('c', text))
  t.same(events.splice(0), ['tools', 'tools', 'prompts', 'resources'])
  t.equal(registry.unregister('tool', 'missing'), false)
  t.same(events, [], 'no change, no event')
  t.equal(registry.unregister('template', 'test://{x}'), true)
  t.equal(registry.unregister('prompt', 'p'), true)
  t.same(events.splice(0), ['resources', 'prompts'])
  registry.replaceTools([mcp.tool('z', text)])
  registry.replacePrompts([])
  registry.replaceResources([mcp.resource('test://r', 'r', text)], [mcp.resourceTemplate('test://{y}', 'y', text)])
  t.same(events.splice(0), ['tools', 'prompts', 'resources'])
  off()
  registry.register(mcp.tool('after', text))
  t.same(events, [])
})

t.test('a throwing listener does not stop the others', async (t) => {
  const registry = new Registry(noPages)
  const heard: string[] = []
  registry.onChange(() => {
    throw new Error('listener broke')
  })
  registry.onChange((list) => heard.push(list))
  t.throws(() => registry.register(mcp.tool('a', text)), /listener broke/)
  t.same(heard, ['tools'])
  t.ok(registry.tool('a'), 'the change itself happened')
})

t.test('unregister and replace* change what lookups find', async (t) => {
  const registry = new Registry(noPages)
  registry.register(mcp.tool('a', text), mcp.prompt('p', text), mcp.resource('test://r', 'r', text), mcp.resourceTemplate('test://t/{id}', 't', text))
  t.ok(registry.unregister('resource', 'test://r'))
  t.equal(registry.resource('test://r'), undefined)
  registry.replaceTools([mcp.tool('b', text), mcp.tool('c', text)])
  t.same(registry.listTools().tools.map((tool) => tool.name), ['b', 'c'])
  t.equal(registry.tool('a'), undefined)
  registry.replaceResources([mcp.resource('test://s', 's', text)])
  t.same(registry.listResources().resources.map((r) => r.uri), ['test://s'])
  t.same(registry.listResourceTemplates().resourceTemplates.map((r) => r.uriTemplate), ['test://t/{id}'], 'templates not given: kept')
  t.throws(() => registry.replaceTools([mcp.prompt('p', text) as never]), /expected tool, got "prompt"/)
  t.throws(() => registry.replacePrompts([mcp.prompt('bad', 1 as never)]), /Invalid prompt "bad"/)
  t.ok(registry.prompt('p'), 'a failed replace changes nothing')
})

t.test('lookups honour hidden keys', async (t) => {
  const registry = new Registry(noPages)
  registry.register(mcp.tool('a', text), mcp.prompt('p', text), mcp.resource('test://r', 'r', text), mcp.resourceTemplate('test://t/{id}', 't', text))
  const hidden = new Set(['tool:a', 'prompt:p', 'resource:test://r', 'template:test://t/{id}'])
  t.equal(registry.tool('a', hidden), undefined)
  t.equal(registry.prompt('p', hidden), undefined)
  t.equal(registry.resource('test://r', hidden), undefined)
  t.equal(registry.template('test://t/{id}', hidden), undefined)
  t.equal(registry.resolveResource('test://t/1', hidden), undefined)
  t.ok(registry.tool('a', new Set(['tool:b'])))
})

t.test('resolveResource: static first, then templates in order', async (t) => {
  const registry = new Registry(noPages)
  registry.register(
    mcp.resourceTemplate('test://template/{id}/data', 'data', text),
    mcp.resourceTemplate('test://template/{id}/{part}', 'any', text),
    mcp.resource('test://template/static/data', 'static', text),
  )
  t.match(registry.resolveResource('test://template/static/data'), { kind: 'resource', entry: { resource: { name: 'static' } } })
  t.match(registry.resolveResource('test://template/123/data'), { kind: 'template', entry: { template: { name: 'data' } }, variables: { id: '123' } })
  t.match(registry.resolveResource('test://template/123/other'), { kind: 'template', entry: { template: { name: 'any' } }, variables: { id: '123', part: 'other' } })
  t.equal(registry.resolveResource('test://template/1/2/3'), undefined)
  t.equal(registry.resolveResource('test://elsewhere'), undefined)
})
