import t from 'tap'
import { EdgeError, McpError, RpcCode } from '../../gateway/wire/errors.ts'
import { StoreUnavailableError } from '../../gateway/store/store.ts'
import { mcp, ToolError, type ToolCallback, type ToolOptions } from '../../gateway/registry/components.ts'
import { callTool } from '../../gateway/registry/call-tool.ts'
import { Registry } from '../../gateway/registry/registry.ts'
import { fakeContext } from './fake-context.ts'

/** What the tool layer logged about unexpected failures. */
const failures: Array<{ ref: string; err: unknown; tool: string }> = []
const log = { error: (fields: object) => void failures.push(fields as (typeof failures)[number]) }

const messageSchema = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }

function entryOf(callback: ToolCallback, options: ToolOptions = {}) {
  const registry = new Registry({ pagination: { tools: 0, prompts: 0, resources: 0 } })
  registry.register(mcp.tool('t', callback, options))
  return registry.tool('t')!
}

async function call(callback: ToolCallback, args: unknown = {}, options: ToolOptions = {}) {
  return callTool(entryOf(callback, options), args, fakeContext(), log)
}

t.test('return-value shortcuts', async (t) => {
  t.same(await call(() => 'hello'), { content: [{ type: 'text', text: 'hello' }] }, 'string → one text block')
  const blocks = [
    { type: 'text' as const, text: 'a' },
    { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' },
  ]
  t.same(await call(() => blocks), { content: blocks }, 'array → content')
  const full = { content: [{ type: 'text' as const, text: 'r' }], structuredContent: { a: 1 }, _meta: { m: true } }
  t.equal(await call(() => full), full, 'an object with content is passed through as is')
  t.same(await call(() => ({ temperature: 21, unit: 'C' })), {
    content: [{ type: 'text', text: '{"temperature":21,"unit":"C"}' }],
    structuredContent: { temperature: 21, unit: 'C' },
  }, 'other object → structuredContent + JSON text')
  t.same(await call(() => ({ isError: true, structuredContent: { code: 7 } }) as never), {
    isError: true,
    structuredContent: { code: 7 },
    content: [{ type: 'text', text: '{"code":7}' }],
  }, 'an isError object without content gets the JSON as text')
  t.same(await call(async () => undefined as never), { content: [] }, 'undefined → no content')
  t.match(await call(() => 42 as never), { isError: true, content: [{ type: 'text', text: /unsupported return value of type number/ }] })
  const circular: Record<string, unknown> = {}
  circular.self = circular
  t.match(await call(() => circular as never), { isError: true, content: [{ text: /Tool returned an invalid result/ }] })
})

t.test('arguments: validated by the compiled schema, missing means {}', async (t) => {
  let received: unknown
  const echo: ToolCallback = (args) => {
    received = args
    return `Tool echo: ${String(args.message)}`
  }
  t.same(await call(echo, { message: 'hi' }, { inputSchema: messageSchema }), { content: [{ type: 'text', text: 'Tool echo: hi' }] })
  t.same(await call(echo, { message: 3 }, { inputSchema: messageSchema }), {
    content: [{ type: 'text', text: 'Invalid arguments: /message must be string' }],
    isError: true,
  })
  t.same(await call(echo, undefined, { inputSchema: messageSchema }), {
    content: [{ type: 'text', text: "Invalid arguments: must have required property 'message'" }],
    isError: true,
  })
  t.match(await call(echo, { message: 'a', extra: 1 }, { inputSchema: { ...messageSchema, additionalProperties: false } }), {
    isError: true,
    content: [{ text: "Invalid arguments: must NOT have additional properties ('extra')" }],
  })
  t.match(await call(echo, [1], {}), { isError: true, content: [{ text: 'Invalid arguments: must be object' }] }, 'default schema wants an object')
  received = 'untouched'
  await call(echo, undefined)
  t.same(received, {}, 'no arguments field → {}')
})

t.test('outputSchema: structured content is checked', async (t) => {
  const outputSchema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }
  t.same(await call(() => ({ n: 1 }), {}, { outputSchema }), { content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } })
  t.same(await call(() => ({ n: 'one' }), {}, { outputSchema }), {
    content: [{ type: 'text', text: 'Tool output did not match its outputSchema: /n must be number' }],
    isError: true,
  })
  t.match(await call(() => ({ content: [], structuredContent: {} }), {}, { outputSchema }), {
    isError: true,
    content: [{ text: "Tool output did not match its outputSchema: must have required property 'n'" }],
  })
  t.match(await call(() => 'plain text', {}, { outputSchema }), { isError: true, content: [{ text: /no structuredContent/ }] })
  const failure = { content: [{ type: 'text' as const, text: 'failed' }], isError: true }
  t.equal(await call(() => failure, {}, { outputSchema }), failure, 'an error result is not checked against the schema')
})

t.test('thrown errors become isError results', async (t) => {
  t.same(await call(() => {
    throw new ToolError('quota exceeded')
  }), { content: [{ type: 'text', text: 'quota exceeded' }], isError: true })
  const content = [{ type: 'text' as const, text: 'custom' }]
  t.same(await call(() => {
    throw new ToolError('ignored', { content, structuredContent: { retryAfter: 3 } })
  }), { content, isError: true, structuredContent: { retryAfter: 3 } })
  // Anything but a ToolError is unexpected: its text stays in the log, the client gets a reference.
  const boom = new TypeError('boom')
  for (const thrown of [boom, 'a string', new Error(''), Object.create(null)]) {
    const result = await call(async () => {
      throw thrown
    })
    const ref = /^Tool t failed \(ref ([\w-]+)\)$/.exec(result.content[0]?.type === 'text' ? result.content[0].text : '')
    t.ok(ref !== null && result.isError === true, `${String(result.content[0] && 'text' in result.content[0] ? result.content[0].text : '')}`)
    const logged = failures.find((f) => f.ref === ref?.[1])
    t.equal(logged?.err, thrown, 'the log has what was thrown, under the same reference')
    t.equal(logged?.tool, 't', 'and the tool')
  }
  t.equal(new Set(failures.map((f) => f.ref)).size, failures.length, 'each failure its own reference')

  const refusal = new EdgeError('MCP_EDGE_CLIENT_CAPABILITY_MISSING', 'the client did not declare elicitation')
  t.same(await call(() => {
    throw refusal
  }), { content: [{ type: 'text', text: 'the client did not declare elicitation' }], isError: true }, "the gateway's own refusal through ctx, as written")
  // A store outage met inside the tool is the gateway's failure: it propagates, and the transport
  // answers 503 with the error table's row (which names no backend), as for the gateway's own writes.
  const outage = new StoreUnavailableError('redis: Command timed out')
  await t.rejects(Promise.resolve().then(() => call(() => {
    throw outage
  })), outage, 'a store outage is not a tool result')
  await t.rejects(Promise.resolve().then(() => call(async () => {
    throw outage
  })), outage, 'nor when the tool is async')
})

t.test('McpError and cancellation propagate', async (t) => {
  const protocolError = new McpError(RpcCode.InvalidParams, 'nope')
  await t.rejects(call(() => {
    throw protocolError
  }), protocolError)
  const controller = new AbortController()
  const entry = entryOf(async (_args, ctx) => {
    controller.abort()
    throw ctx.signal.reason
  })
  await t.rejects(async () => callTool(entry, {}, fakeContext(controller), log), { name: 'AbortError' })
})

t.test('a synchronous callback gives its result synchronously; an async one a promise', async (t) => {
  const sync = callTool(entryOf(() => 'now'), {}, fakeContext(), log)
  t.notOk(sync instanceof Promise, 'no promise on the hot path')
  t.same(sync, { content: [{ type: 'text', text: 'now' }] })
  const later = callTool(entryOf(async () => 'later'), {}, fakeContext(), log)
  t.ok(later instanceof Promise)
  t.same(await later, { content: [{ type: 'text', text: 'later' }] })
  const failing = callTool(entryOf(async () => {
    throw new ToolError('broke')
  }), {}, fakeContext(), log)
  t.same(await failing, { content: [{ type: 'text', text: 'broke' }], isError: true }, 'a rejected promise is an isError result')
})

t.test('the callback gets the context', async (t) => {
  const ctx = fakeContext()
  let seen: unknown
  await callTool(entryOf((_args, c) => {
    seen = c
    return ''
  }), {}, ctx, log)
  t.equal(seen, ctx)
})
