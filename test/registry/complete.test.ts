import t from 'tap'
import { RpcCode } from '../../gateway/wire/errors.ts'
import { mcp } from '../../gateway/registry/components.ts'
import { complete } from '../../gateway/registry/complete.ts'
import { Registry } from '../../gateway/registry/registry.ts'
import { fakeContext } from './fake-context.ts'

const many = Array.from({ length: 150 }, (_, i) => `value-${i}`)

function fixture(): { registry: Registry; seen: unknown[] } {
  const seen: unknown[] = []
  const registry = new Registry({ pagination: { tools: 0, prompts: 0, resources: 0 } })
  registry.register(
    mcp.prompt('test_prompt_with_arguments', () => 'x', {
      arguments: { arg1: { required: true }, arg2: {} },
      completions: {
        arg1: (value, context) => {
          seen.push([value, context])
          return ['testA', 'testB', 'other'].filter((v) => v.startsWith(value))
        },
        arg2: () => many,
      },
    }),
    mcp.resourceTemplate('test://template/{id}/data', 't', () => 'x', {
      completions: {
        id: () => ({ values: many, total: 120, hasMore: false }),
      },
    }),
    mcp.resourceTemplate('test://small/{id}', 's', () => 'x', { completions: { id: () => ({ values: ['1'], total: 9, hasMore: true }) } }),
    mcp.resource('test://static', 'static', () => 'x'),
  )
  return { registry, seen }
}

const ctx = fakeContext()

t.test('prompt argument completion passes the value and the other arguments', async (t) => {
  const { registry, seen } = fixture()
  const result = await complete(registry, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'arg1', value: 'test' }, { arg2: 'b', skip: 3 }, ctx)
  t.same(result, { completion: { values: ['testA', 'testB'], total: 2, hasMore: false } })
  t.same(seen.pop(), ['test', { arg2: 'b' }], 'context.arguments map, strings only')
  await complete(registry, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'arg1', value: '' }, { arguments: { arg2: 'c' } }, ctx)
  t.same(seen.pop(), ['', { arg2: 'c' }], 'the whole params.context works too')
  await complete(registry, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'arg1', value: '' }, undefined, ctx)
  t.same(seen.pop(), ['', {}])
})

t.test('results are clamped to 100 values', async (t) => {
  const { registry } = fixture()
  const fromList = await complete(registry, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'arg2', value: '' }, undefined, ctx)
  t.equal(fromList.completion.values.length, 100)
  t.equal(fromList.completion.values[99], 'value-99')
  t.equal(fromList.completion.total, 150)
  t.equal(fromList.completion.hasMore, true)
  const fromObject = await complete(registry, { type: 'ref/resource', uri: 'test://template/{id}/data' }, { name: 'id', value: '' }, undefined, ctx)
  t.equal(fromObject.completion.values.length, 100)
  t.equal(fromObject.completion.total, 150, 'total is at least the number of values')
  t.equal(fromObject.completion.hasMore, true)
  t.same(
    await complete(registry, { type: 'ref/resource', uri: 'test://small/{id}' }, { name: 'id', value: '' }, undefined, ctx),
    { completion: { values: ['1'], total: 9, hasMore: true } },
    'a small object passes through',
  )
})

t.test('nothing to complete is an empty list', async (t) => {
  const { registry } = fixture()
  const empty = { completion: { values: [] } }
  t.same(await complete(registry, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'nope', value: '' }, undefined, ctx), empty)
  t.same(await complete(registry, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'constructor', value: '' }, undefined, ctx), empty)
  t.same(await complete(registry, { type: 'ref/resource', uri: 'test://static' }, { name: 'id', value: '' }, undefined, ctx), empty)
})

t.test('unknown refs and malformed requests are InvalidParams', async (t) => {
  const { registry } = fixture()
  const invalid = { code: RpcCode.InvalidParams }
  const arg = { name: 'a', value: '' }
  await t.rejects(complete(registry, { type: 'ref/prompt', name: 'missing' }, arg, undefined, ctx), { ...invalid, message: 'Unknown prompt: missing' })
  await t.rejects(complete(registry, { type: 'ref/resource', uri: 'test://nope/{x}' }, arg, undefined, ctx), { ...invalid, message: 'Unknown resource template: test://nope/{x}' })
  await t.rejects(complete(registry, { type: 'ref/other' }, arg, undefined, ctx), invalid)
  await t.rejects(complete(registry, null, arg, undefined, ctx), invalid)
  await t.rejects(complete(registry, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'arg1' }, undefined, ctx), invalid)
  const hidden = new Set(['prompt:test_prompt_with_arguments'])
  await t.rejects(complete(registry, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, { name: 'arg1', value: '' }, undefined, ctx, hidden), invalid)
})

t.test('a callback returning garbage is an internal error, not a silent empty list', async (t) => {
  const registry = new Registry({ pagination: { tools: 0, prompts: 0, resources: 0 } })
  registry.register(mcp.prompt('p', () => 'x', { completions: { a: () => [1, 2] as never, b: () => 'nope' as never } }))
  await t.rejects(complete(registry, { type: 'ref/prompt', name: 'p' }, { name: 'a', value: '' }, undefined, ctx), /must be strings/)
  await t.rejects(complete(registry, { type: 'ref/prompt', name: 'p' }, { name: 'b', value: '' }, undefined, ctx), /must return a list of strings/)
})
