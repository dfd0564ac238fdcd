/**
 * The configuration reference is generated from schema.json (gateway/config/reference.ts, run by
 * `npm run docs`): the committed docs/reference/configuration.md must be what the generator writes
 * now, and every key must say what it does and what it defaults to (issue 32: the hand-written
 * table had drifted from the schema).
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { REFERENCE_FILE, SCHEMA_FILE, referenceFromDisk, referenceRows, renderReference, type SchemaNode } from '../../gateway/config/reference.ts'

const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as SchemaNode

t.test('the committed reference is what `npm run docs` writes from the schema', async (t) => {
  const committed = readFileSync(REFERENCE_FILE, 'utf8')
  const generated = referenceFromDisk()
  if (committed !== generated) {
    const a = committed.split('\n')
    const b = generated.split('\n')
    const line = a.findIndex((text, i) => text !== b[i])
    t.fail(`docs/reference/configuration.md differs from the schema at line ${line + 1}: run \`npm run docs\` and commit the result`, {
      committed: a[line],
      generated: b[line],
    })
  } else t.pass('identical')
})

t.test('every key has a description and a default (`default`, or `x-default` in words)', async (t) => {
  const rows = referenceRows(schema)
  t.ok(rows.length > 250, `${rows.length} keys listed`)
  const undocumented = rows.filter((row) => row.description === undefined).map((row) => row.key)
  const noDefault = rows.filter((row) => row.default === undefined).map((row) => row.key)
  t.same(undocumented, [], 'no key without a description: add "description" in schema.json')
  t.same(noDefault, [], 'no key without a default: add "default" (when ajv may fill it in) or "x-default" (words) in schema.json')
})

t.test('keys from every corner of the schema, with their defaults', async (t) => {
  const byKey = new Map(referenceRows(schema).map((row) => [row.key, row]))
  t.match(byKey.get('listen.port'), { type: 'integer', default: '`8080`' })
  t.match(byKey.get('store.url'), { description: /rediss:\/\// }, 'a key of one store backend (an if/then branch)')
  t.match(byKey.get('routes[].upstreams[].isolation'), { default: '`shared`', description: /ONE child serves every session/ })
  t.match(byKey.get('routes[].upstreams[].auth.oauth.consent_wait'), { default: '`120`' }, 'a key four definitions deep')
  t.match(byKey.get('routes[].auth'), { description: /The same keys as `auth`/ }, 'a shared definition is listed once')
  t.notOk(byKey.has('routes[].auth.jwt.issuer'), 'and not repeated under the route')
  t.match(byKey.get('limits.sessions_per_principal'), { default: '`100`' })
})

t.test('the generator follows what the schema says, not a fixed list', async (t) => {
  const small: SchemaNode = {
    properties: {
      port: { type: 'integer', default: 8080, description: 'The port.' },
      pool: { type: 'object', properties: { max: { type: 'integer', 'x-default': '`4` (shared)', description: 'Children.' } } },
      token: { type: 'string' },
    },
    required: ['token'],
  }
  const rows = referenceRows(small)
  t.same(rows.map((row) => [row.key, row.default, row.description]), [
    ['port', '`8080`', 'The port.'],
    ['pool', undefined, undefined],
    ['token', 'required', undefined],
    ['pool.max', '`4` (shared)', 'Children.'],
  ])
  t.match(renderReference(small), /\| `token` \| string \| required \|  \|/, 'an undocumented key shows as one')
})
