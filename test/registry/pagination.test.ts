import t from 'tap'
import { McpError, RpcCode } from '../../gateway/wire/errors.ts'
import { mcp } from '../../gateway/registry/components.ts'
import { decodeCursor, encodeCursor } from '../../gateway/registry/pagination.ts'
import { Registry } from '../../gateway/registry/registry.ts'

const text = () => 'x'

function registryWith(pageSize: number, count: number): Registry {
  const registry = new Registry({ pagination: { tools: pageSize, prompts: pageSize, resources: pageSize } })
  const names = Array.from({ length: count }, (_, i) => `tool_${i}`)
  registry.register(...names.map((name) => mcp.tool(name, text)))
  registry.register(...names.map((name) => mcp.prompt(name, text)))
  registry.register(...names.map((name) => mcp.resource(`test://r/${name}`, name, text)))
  registry.register(...names.map((name) => mcp.resourceTemplate(`test://t/${name}/{id}`, name, text)))
  return registry
}

/** The InvalidParams error `fn` throws for `cursor`, as a plain shape to match. */
function invalidCursor(fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return err instanceof McpError ? { code: err.code, message: err.message, data: err.data } : err
  }
  return 'no error'
}

function expected(cursor: unknown) {
  return { code: RpcCode.InvalidParams, message: 'Invalid cursor', data: { cursor } }
}

t.test('three pages with opaque cursors, in registration order', async (t) => {
  const registry = registryWith(2, 5)
  const first = registry.listTools()
  t.same(first.tools.map((tool) => tool.name), ['tool_0', 'tool_1'])
  t.type(first.nextCursor, 'string')
  t.notMatch(first.nextCursor!, /^\d+$/, 'not a bare offset')
  const second = registry.listTools(first.nextCursor)
  t.same(second.tools.map((tool) => tool.name), ['tool_2', 'tool_3'])
  const third = registry.listTools(second.nextCursor)
  t.same(third.tools.map((tool) => tool.name), ['tool_4'])
  t.equal(third.nextCursor, undefined)
  t.notOk('nextCursor' in third, 'no nextCursor key on the last page')

  for (const [list, field] of [
    [(c?: string) => registry.listPrompts(c), 'prompts'],
    [(c?: string) => registry.listResources(c), 'resources'],
    [(c?: string) => registry.listResourceTemplates(c), 'resourceTemplates'],
  ] as const) {
    const seen: unknown[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = list(cursor) as unknown as Record<string, unknown[]> & { nextCursor?: string }
      seen.push(...page[field]!)
      cursor = page.nextCursor
      pages++
    } while (cursor !== undefined)
    t.equal(pages, 3, `${field}: three pages`)
    t.equal(seen.length, 5, `${field}: every item once`)
  }
})

t.test('bad cursors are InvalidParams', async (t) => {
  const registry = registryWith(2, 5)
  for (const cursor of ['', 'garbage!', 'bm90LWEtY3Vyc29y', encodeCursor(5), encodeCursor(99), encodeCursor(0), `${encodeCursor(2)}=`, 'x'.repeat(40)]) {
    t.same(invalidCursor(() => registry.listTools(cursor)), expected(cursor), `rejects ${JSON.stringify(cursor)}`)
  }
  t.same(invalidCursor(() => registry.listTools(42 as unknown as string)), expected(42), `rejects ${JSON.stringify(42)}`)
  t.equal(decodeCursor(encodeCursor(4), 5), 4)
  t.same(registry.listTools(encodeCursor(3)).tools.map((tool) => tool.name), ['tool_3', 'tool_4'], 'an off-boundary offset still pages')
})

t.test('pagination 0 sends one page and accepts no cursor past the end', async (t) => {
  const registry = registryWith(0, 5)
  const page = registry.listTools()
  t.equal(page.tools.length, 5)
  t.equal(page.nextCursor, undefined)
  t.same(invalidCursor(() => registry.listTools(encodeCursor(5))), expected(encodeCursor(5)), `rejects ${JSON.stringify(encodeCursor(5))}`)
})

t.test('an empty list is one empty page', async (t) => {
  const registry = new Registry({ pagination: { tools: 2, prompts: 2, resources: 2 } })
  t.same(registry.listTools(), { tools: [] })
  t.same(invalidCursor(() => registry.listTools(encodeCursor(1))), expected(encodeCursor(1)), `rejects ${JSON.stringify(encodeCursor(1))}`)
})

t.test('hidden keys filter lists and paging counts only visible items', async (t) => {
  const registry = registryWith(2, 5)
  const hidden = new Set(['tool:tool_0', 'tool:tool_3', 'prompt:tool_1', 'resource:test://r/tool_4', 'template:test://t/tool_2/{id}'])
  const first = registry.listTools(undefined, hidden)
  t.same(first.tools.map((tool) => tool.name), ['tool_1', 'tool_2'])
  const second = registry.listTools(first.nextCursor, hidden)
  t.same(second.tools.map((tool) => tool.name), ['tool_4'])
  t.equal(second.nextCursor, undefined)
  t.notOk(registry.listPrompts(undefined, hidden).prompts.some((p) => p.name === 'tool_1'))
  const resources = [...registry.listResources(undefined, hidden).resources, ...registry.listResources(encodeCursor(2), hidden).resources]
  t.same(resources.map((r) => r.name), ['tool_0', 'tool_1', 'tool_2', 'tool_3'])
  t.notOk(registry.listResourceTemplates(encodeCursor(2), hidden).resourceTemplates.some((r) => r.name === 'tool_2'))
  t.same(registry.listResourceTemplates(undefined, hidden).resourceTemplates.map((r) => r.name), ['tool_0', 'tool_1'])
})

t.test('pages are cached until the list changes', async (t) => {
  const registry = registryWith(2, 5)
  const first = registry.listTools()
  t.equal(registry.listTools(), first, 'same object on an unchanged registry')
  t.equal(registry.listTools(first.nextCursor), registry.listTools(first.nextCursor))
  t.equal(registry.listTools(undefined, new Set()), first, 'an empty hidden set uses the cache')
  t.equal(registry.listTools(undefined, new Set(['prompt:tool_0', 'tool:unknown'])), first, 'keys of other lists use the cache')
  t.ok(Object.isFrozen(first) && Object.isFrozen(first.tools), 'shared pages are frozen')
  const prompts = registry.listPrompts()
  registry.register(mcp.tool('tool_new', text))
  const after = registry.listTools()
  t.not(after, first, 'rebuilt after a change')
  t.equal(registry.listPrompts(), prompts, 'other lists keep their cache')
  t.same(registry.listTools(registry.listTools(after.nextCursor).nextCursor).tools.map((tool) => tool.name), ['tool_4', 'tool_new'])
})
