// The position index: every node of the YAML text can be found again by its JSON pointer.
import t from 'tap'
import { ConfigError } from '../../gateway/config/config-error.ts'
import { configFromObject } from '../../gateway/config/load.ts'
import { parseYaml } from '../../gateway/config/yaml-source.ts'

const text = `top: 1
nested:
  "quoted key": 'x'
  a/b~c: 2
  list:
    - one
    -   two
    - [three, { four: 4 }]
  block: |
    text
  after: 5
anchored: &base { k: 1 }
alias: *base
last: { deep: [0, 1] }
`

t.test('keys, items, quoting, flow and block styles', async (t) => {
  const { doc, locate } = parseYaml(text, 'x.yaml')
  t.match(doc, { top: 1, nested: { 'quoted key': 'x', list: ['one', 'two', ['three', { four: 4 }]] } })
  const at = (pointer: string) => {
    const p = locate(pointer)
    return p && [p.line, p.column]
  }
  t.same(at(''), [1, 1])
  t.same(at('/top'), [1, 1])
  t.same(at('/nested'), [2, 1])
  t.same(at('/nested/quoted key'), [3, 3], 'a quoted key starts at its quote')
  t.same(at('/nested/a~1b~0c'), [4, 3], 'pointer escapes')
  t.same(at('/nested/list/0'), [6, 7])
  t.same(at('/nested/list/1'), [7, 9])
  t.same(at('/nested/list/2/1'), [8, 15])
  t.same(at('/nested/list/2/1/four'), [8, 17])
  t.same(at('/nested/block'), [9, 3])
  t.same(at('/nested/after'), [11, 3])
  t.same(at('/anchored'), [12, 1])
  t.same(at('/alias/k'), [13, 1], 'inside an alias: the alias')
  t.same(at('/last/deep/1'), [14, 19])
  t.same(at('/nested/missing/deeper'), [2, 1], 'unknown nodes: nearest ancestor')
})

t.test('complex keys are refused by js-yaml', async (t) => {
  t.throws(() => parseYaml('? [a, b]\n: 1\n', 'x.yaml'), { message: /complex keys/ })
})

t.test('a syntax error in a later line points there', async (t) => {
  const err = t.throws(() => parseYaml('a: 1\nb: "open\n', 'x.yaml'))
  t.ok(err instanceof ConfigError)
  t.match((err as ConfigError).problems, [{ file: 'x.yaml', line: 3, path: '' }])
})

t.test('an unquoted ${VAR} inside a flow collection: the error says to quote it', async (t) => {
  const err = t.throws(() => parseYaml('server: { name: ${NAME}, version: 1.0.0 }\n', 'x.yaml'))
  t.match((err as ConfigError).problems, [{
    line: 1,
    message: 'missed comma between flow collection entries; ${NAME} inside a flow collection ({ … } or [ … ]) must be quoted: "${NAME}"',
  }])
  t.same(parseYaml('server: { name: "${NAME}", list: ["${A:-x}"] }\n', 'x.yaml').doc, { server: { name: '${NAME}', list: ['${A:-x}'] } }, 'quoted, it parses')
  const other = t.throws(() => parseYaml('a: { b: [1 }\nd: ${X}\n', 'x.yaml'))
  t.notMatch((other as ConfigError).problems[0]?.message, 'quoted', 'no hint for another flow error')
})

t.test('odd keys are quoted in dotted paths; format and emptiness are checked', async (t) => {
  try {
    configFromObject({
      routes: [{
        location: '/a', handler: 'h.ts',
        server: { name: '', version: '1', website_url: 'not a url' },
        options: { 'odd key': ['${NOPE}'] },
      }],
    }, 'x', {})
    t.fail('expected a ConfigError')
  } catch (err) {
    t.ok(err instanceof ConfigError)
    t.equal((err as ConfigError).formatProblems(), [
      'x: routes[0].options["odd key"][0]: environment variable NOPE is not set and has no default (write ${NOPE:-default} to give one)',
      'x: routes[0].server.name: must not be empty',
      'x: routes[0].server.website_url: must be a valid uri (found string "not a url")',
    ].join('\n'))
  }
})
