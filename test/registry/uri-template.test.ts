import t from 'tap'
import { UriTemplate } from '../../gateway/registry/uri-template.ts'

t.test('matches only URIs the template expands to', async (t) => {
  const template = new UriTemplate('test://template/{id}/data')
  t.same(template.variableNames, ['id'])
  t.equal(template.prefix, 'test://template/')
  t.same(template.match('test://template/123/data'), { id: '123' })
  t.same(template.match('test://template/a%20b/data'), { id: 'a b' }, 'percent-decoded')
  for (const uri of [
    'test://template/123/other',
    'test://template/123/data/more',
    'test://template/a/b/data',
    'test://template//data',
    'test://other/123/data',
    'test://template/123',
  ]) {
    t.equal(template.match(uri), undefined, `no match: ${uri}`)
  }
  t.equal(template.expand({ id: 'x y' }), 'test://template/x%20y/data')
  t.equal(String(template), 'test://template/{id}/data')
})

t.test('operators: reserved, query, path segments, explode', async (t) => {
  const file = new UriTemplate('file:///{+path}{?q,lang}')
  t.same(file.match('file:///docs/a.txt'), { path: 'docs/a.txt' })
  t.same(file.match('file:///docs?q=1&lang=en'), { path: 'docs', q: '1', lang: 'en' })
  const segments = new UriTemplate('repo://x{/parts*}')
  t.same(segments.match('repo://x/a/b/c'), { parts: ['a', 'b', 'c'] })
  const list = new UriTemplate('tags://{tags}')
  t.same(list.match('tags://a,b'), { tags: ['a', 'b'] })
  const noVars = new UriTemplate('test://fixed')
  t.same(noVars.match('test://fixed'), {})
  t.equal(noVars.match('test://fixed2'), undefined)
})

t.test('rejects what is not RFC 6570 or not an absolute URI template', async (t) => {
  for (const [template, problem] of [
    ['', /empty/],
    ['test://{id', /unclosed/],
    ['test://id}', /unmatched "}"/],
    ['test://{}', /empty expression/],
    ['test://{a{b}}', /nested/],
    ['test://{=a}', /reserved operator "="/],
    ['test://{|a}', /reserved operator/],
    ['test://{a-b}', /bad variable "a-b"/],
    ['test://{a:0}', /bad variable/],
    ['test://{a:10000}', /bad variable/],
    ['test://{a..b}', /bad variable/],
    ['test://a b/{c}', /character " " is not allowed/],
    ['test://<{c}>', /is not allowed/],
    ['test://%zz/{c}', /bad percent-encoding/],
    ['{scheme}://x', /does not start with a URI scheme/],
    ['/relative/{id}', /does not start with a URI scheme/],
  ] as const) {
    t.throws(() => new UriTemplate(template), problem, template)
  }
  for (const template of ['test://{a.b}', 'test://{%41}', 'test://{a:9999}', 'x://{#frag}', 'x://{;p*,q}', 'x://h/{a}{&b}', 'x://é/{a}', 'test://a%20b/{c}']) {
    t.doesNotThrow(() => new UriTemplate(template), template)
  }
})
