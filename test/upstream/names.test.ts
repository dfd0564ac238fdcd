// How a proxy route names upstream components, and the naming mistakes the config load refuses.
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { Naming } from '../../gateway/upstream/names.ts'

const VALID = /^[a-zA-Z0-9_-]{1,64}$/
const naming = (overrides: object = {}, upstreams = ['docs', 'web']) =>
  new Naming({ prefix: 'auto', separator: '__', tools: { deny: [], rename: {} }, ...overrides }, upstreams)

t.test('prefixes, shortening and the way back', async (t) => {
  const two = naming()
  t.equal(two.tool('docs', 'search'), 'docs__search', 'auto with two upstreams: prefixed')
  t.same(two.parse('docs__search', 'tool'), { upstream: 'docs', name: 'search' }, 'a plain name maps back without a list')
  t.equal(naming({}, ['docs']).tool('docs', 'search'), 'search', 'auto with one upstream: unprefixed')
  t.equal(naming({ prefix: 'always' }, ['docs']).tool('docs', 'search'), 'docs__search', 'always')
  const odd = two.tool('docs', 'web.search/v2')!
  t.match(odd, /^docs__web_search_v2_[0-9a-f]{8}$/, 'characters outside the set become _ and a hash keeps names apart')
  t.not(two.tool('docs', 'web_search_v2'), odd, 'so web_search_v2 and web.search/v2 stay two names')
  const long = two.tool('web', 'x'.repeat(80))!
  t.ok(VALID.test(long) && long.length === 64, `a long name is cut to 64 with a hash: ${long}`)
  t.equal(two.tool('web', 'x'.repeat(80)), long, 'deterministic')
  t.not(two.tool('web', `${'x'.repeat(79)}y`), long, 'another long name, another hash')
  t.equal(two.parse(long, 'tool'), undefined, 'a hashed name needs the index a list fills')
  t.equal(two.parse('nobody__x', 'tool'), undefined, 'a name no upstream could make')
})

t.test('allow, deny and rename', async (t) => {
  const filtered = naming({ tools: { allow: ['docs__*'], deny: ['docs__drop*'], rename: { docs__search: 'search' } } })
  t.equal(filtered.tool('web', 'fetch'), undefined, 'not allowed')
  t.equal(filtered.tool('docs', 'drop_table'), undefined, 'denied (deny wins)')
  t.equal(filtered.tool('docs', 'search'), 'search', 'renamed')
  t.same(filtered.parse('search', 'tool'), { upstream: 'docs', name: 'search' }, 'a renamed name maps back')
  t.equal(filtered.parse('docs__search', 'tool'), undefined, 'the old name is gone')
  t.equal(filtered.prompt('web', 'greet'), 'web__greet', 'prompts are prefixed, not filtered')
})

t.test('the config load refuses names that could collide', async (t) => {
  const route = (extra: object) => ({ routes: [{ location: '/p', server: { name: 'p', version: '1' }, ...extra }] })
  const up = (name: string) => ({ name, url: 'http://127.0.0.1:1/mcp' })
  t.throws(() => configFromObject(route({ upstreams: [up('docs'), up('docs')] })), /duplicate upstream name "docs"/)
  t.throws(() => configFromObject(route({ upstreams: [up('docs'), up('docs-v2')], separator: '-' })), /could collide/)
  t.throws(() => configFromObject(route({ upstreams: [up('a'), up('b')], prefix: 'never' })), /prefix "never" needs exactly one upstream/)
  t.throws(() => configFromObject(route({ upstreams: [up('a')], tools: { rename: { a__x: 'y', a__z: 'y' } } })), /both renamed to "y"/)
  t.throws(() => configFromObject(route({})), /handler|upstreams/, 'a route needs a handler or upstreams')
  t.throws(() => configFromObject(route({ upstreams: [{ name: 'Bad_Name', url: 'http://x' }] })), /must match/)
  t.throws(() => configFromObject(route({ upstreams: [{ name: 'both', url: 'http://x', command: ['x'] }] })), /upstreams/)
  t.ok(configFromObject(route({ upstreams: [up('docs'), up('docs-v2')] })), 'with "__" the same names are fine')
})
