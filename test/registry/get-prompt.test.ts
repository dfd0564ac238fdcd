import t from 'tap'
import { McpError, RpcCode } from '../../gateway/wire/errors.ts'
import { mcp, type PromptCallback, type PromptOptions } from '../../gateway/registry/components.ts'
import { getPrompt } from '../../gateway/registry/get-prompt.ts'
import { Registry } from '../../gateway/registry/registry.ts'
import { fakeContext } from './fake-context.ts'

const twoArgs: PromptOptions = { arguments: { arg1: { required: true }, arg2: { required: true }, extra: {} } }

function get(callback: PromptCallback, args: unknown, options: PromptOptions = {}) {
  const registry = new Registry({ pagination: { tools: 0, prompts: 0, resources: 0 } })
  registry.register(mcp.prompt('p', callback, options))
  return getPrompt(registry.prompt('p')!, args, fakeContext())
}

function invalid(message: string) {
  return new McpError(RpcCode.InvalidParams, message)
}

t.test('return-value shortcuts', async (t) => {
  t.same(await get(() => 'This is a simple prompt for testing.', undefined), {
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }, 'string → one user text message')
  t.same(await get(() => 'x', undefined, { description: 'about p' }), {
    description: 'about p',
    messages: [{ role: 'user', content: { type: 'text', text: 'x' } }],
  }, 'the prompt description comes along')
  const messages = [
    { role: 'user' as const, content: { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' } },
    { role: 'assistant' as const, content: { type: 'resource' as const, resource: { uri: 'test://r', mimeType: 'text/plain', text: 't' } } },
  ]
  t.same(await get(() => messages, {}), { messages }, 'array → messages')
  const full = { description: 'custom', messages, _meta: { a: 1 } }
  t.equal(await get(async () => full, {}), full, 'object with messages → as is')
  await t.rejects(get(() => ({ nope: true }) as never, {}), /Prompt "p" returned an object without messages/)
  await t.rejects(get(() => null as never, {}), /returned null/)
  await t.rejects(get(() => 5 as never, {}), /returned number, not a string, messages or a GetPromptResult/)
})

t.test('arguments: strings, required ones present', async (t) => {
  let received: unknown
  const render: PromptCallback = (args) => {
    received = args
    return `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`
  }
  const result = await get(render, { arg1: 'testValue1', arg2: 'testValue2' }, twoArgs)
  t.match(result.messages[0]?.content, { type: 'text', text: "Prompt with arguments: arg1='testValue1', arg2='testValue2'" })
  await t.rejects(get(render, { arg2: 'b' }, twoArgs), invalid('Missing required argument: arg1'))
  await t.rejects(get(render, undefined, twoArgs), invalid('Missing required argument: arg1'))
  await t.rejects(get(render, { arg1: 'a', arg2: 2 }, twoArgs), invalid('Invalid argument: arg2 must be a string'))
  await t.rejects(get(render, ['a'], twoArgs), { code: RpcCode.InvalidParams })
  await t.rejects(get(render, 'a', twoArgs), { code: RpcCode.InvalidParams })
  received = undefined
  await get(render, undefined)
  t.same(received, {}, 'no arguments field → {}')
  await get(render, { arg1: 'a', arg2: 'b', unknown: 'u' }, twoArgs)
  t.same(received, { arg1: 'a', arg2: 'b', unknown: 'u' }, 'undeclared string arguments pass')
})

t.test('a throwing callback propagates', async (t) => {
  const failure = new Error('render failed')
  await t.rejects(get(() => {
    throw failure
  }, {}), failure)
})
