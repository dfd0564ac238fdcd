// Catalogue overlays: run-time changes as data over what setup declared, the same view on any worker.
import t from 'tap'
import { mcp } from '../../gateway/registry/components.ts'
import { applyChange, buildView, checkedEntries, listsOf, parseOverlay, type Overlay } from '../../gateway/registry/catalogue.ts'
import { Registry } from '../../gateway/registry/registry.ts'

const options = { pagination: { tools: 0, prompts: 0, resources: 0 } }
const complete = () => ['a']

/** What one worker's setup makes: the same on every worker, with its own closures. */
function setup(): { registry: Registry; a: ReturnType<typeof mcp.tool>; b: ReturnType<typeof mcp.tool>; p: ReturnType<typeof mcp.prompt> } {
  const registry = new Registry(options)
  const a = mcp.tool('a', () => 'a')
  const b = mcp.tool('b', () => 'b', { description: 'b at setup' })
  const p = mcp.prompt('p', () => 'p', { arguments: { x: {} }, completions: { x: complete } })
  registry.register(a, p)
  registry.declare(b)
  return { registry, a, b, p }
}

const names = (view: Registry) => view.listTools().tools.map((tool) => tool.name)

t.test('an overlay made on one worker gives the same view on another, with that worker\'s callbacks', async (t) => {
  const one = setup()
  let overlay: Overlay = { entries: {} }
  overlay = applyChange(overlay, { op: 'register', entries: checkedEntries(one.registry, [one.b]) })
  overlay = applyChange(overlay, { op: 'register', entries: checkedEntries(one.registry, [mcp.tool('a', one.a.callback, { description: 'a, described at run time' })]) })
  t.same(overlay.entries['tool:b'], 1, 'a declared component unchanged is stored as "shown", no data')
  t.match(overlay.entries['tool:a'], { name: 'a', description: 'a, described at run time' }, 'new descriptions are data')
  const stored = JSON.stringify(overlay)

  const other = setup()
  const view = buildView(other.registry, other.registry, parseOverlay(stored))
  t.same(names(view), ['a', 'b'])
  t.equal(view.tool('b')?.tool.callback, other.b.callback, 'the other worker calls its own callback')
  t.equal(view.tool('a')?.descriptor.description, 'a, described at run time')
  t.equal(view.tool('a')?.tool.callback, other.a.callback)
  t.equal(names(other.registry).length, 1, 'the setup registry itself is untouched')
})

t.test('unregister hides, replace clears a kind, data resources need no declaration', async (t) => {
  const { registry, b } = setup()
  let overlay: Overlay = { entries: {} }
  overlay = applyChange(overlay, { op: 'unregister', key: 'tool:a' })
  t.same(names(buildView(registry, registry, overlay)), [])
  overlay = applyChange(overlay, { op: 'replace', kinds: ['tool'], entries: checkedEntries(registry, [b]) })
  t.same(overlay.cleared, ['tool'])
  t.same(Object.keys(overlay.entries), ['tool:b'], 'the replaced kind\'s earlier entries are gone')
  const note = mcp.resource('data://note', 'note', 'some text', { mimeType: 'text/plain' })
  t.equal(note.text, 'some text')
  overlay = applyChange(overlay, { op: 'register', entries: checkedEntries(registry, [note]) })
  const view = buildView(registry, registry, parseOverlay(JSON.stringify(overlay)))
  t.same(names(view), ['b'])
  t.same(view.listPrompts().prompts.map((p) => p.name), ['p'], 'another kind is untouched')
  t.equal(await view.resource('data://note')?.resource.callback('data://note', undefined as never), 'some text', 'the text travelled as data')
  t.same([...listsOf({ op: 'replace', kinds: ['resource', 'template'], entries: [] })], ['resources'])
  t.same([...listsOf({ op: 'unregister', key: 'prompt:p' })], ['prompts'])
})

t.test('a callback made at run time is refused, whatever its name', async (t) => {
  const { registry, p } = setup()
  t.throws(() => checkedEntries(registry, [mcp.tool('new', () => '')]), { code: 'MCP_EDGE_UNDECLARED_COMPONENT', message: /tool:new was not declared at setup/ })
  t.throws(() => checkedEntries(registry, [mcp.tool('a', () => 'a')]), { code: 'MCP_EDGE_UNDECLARED_COMPONENT', message: /callback made at run time/ })
  t.throws(() => checkedEntries(registry, [mcp.prompt('p', p.callback, { completions: { x: () => [] } })]), { code: 'MCP_EDGE_UNDECLARED_COMPONENT' }, 'completions are code too')
  t.doesNotThrow(() => checkedEntries(registry, [mcp.prompt('p', p.callback, { completions: { x: complete }, description: 'new' })]))
  t.throws(() => checkedEntries(registry, [mcp.tool('bad name!', () => '')]), /Invalid tool/, 'checked as at setup first')
})

t.test('a stored overlay cannot make a worker fail', async (t) => {
  const { registry } = setup()
  t.same(parseOverlay('not json'), { entries: {} })
  t.same(parseOverlay('{"cleared":["tool","nonsense"],"entries":null}'), { cleared: ['tool'], entries: {} })
  const view = buildView(registry, registry, { entries: { 'tool:gone': 1, 'tool:a': { name: 'a', inputSchema: { type: 'nonsense' } }, 'prompt:missing': { name: 'missing' } } })
  t.same(names(view), ['a'], 'keys this worker lacks (a rolling deploy) and data it cannot build are left out; a stays as set up')
  t.equal(view.tool('a')?.descriptor.inputSchema.type, 'object')
})
