/**
 * The config validator is schema.json compiled ahead of time (gateway/config/validator-code.ts, run
 * by `npm run generate`): the committed gateway/config/schema-validator.mjs must be what the
 * generator writes now, from this schema and the ajv in the lockfile, or a start would validate
 * against a schema that is no longer the one on disk.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { VALIDATOR_FILE, validatorCode, validatorCodeFromDisk } from '../../gateway/config/validator-code.ts'
import validateSchema from '../../gateway/config/schema-validator.mjs'

t.test('the committed validator is what `npm run generate` writes from the schema', async (t) => {
  const committed = readFileSync(VALIDATOR_FILE, 'utf8')
  const generated = validatorCodeFromDisk()
  if (committed !== generated) {
    const a = committed.split('\n')
    const b = generated.split('\n')
    const line = a.findIndex((text, i) => text !== b[i])
    t.fail(`gateway/config/schema-validator.mjs differs from the schema at line ${line + 1}: run \`npm run generate\` and commit the result`, {
      committed: a[line]?.slice(0, 200),
      generated: b[line]?.slice(0, 200),
    })
  } else t.pass('identical')
})

t.test("ajv's require()s of its runtime helpers become ES module imports", async (t) => {
  const code = validatorCode({ type: 'object', properties: { name: { type: 'string', minLength: 2, format: 'uri' }, tags: { type: 'array', uniqueItems: true } } })
  t.notMatch(code, /\brequire\(/, 'no require() left')
  t.match(code, /^import ajv_dist_runtime_ucs2length from "ajv\/dist\/runtime\/ucs2length\.js"$/m, 'string length')
  t.match(code, /^import ajv_dist_runtime_equal from "ajv\/dist\/runtime\/equal\.js"$/m, 'deep equality (uniqueItems)')
  t.match(code, /^import ajv_formats_dist_formats from "ajv-formats\/dist\/formats\.js"$/m, 'formats')
  t.match(code, /ajv_formats_dist_formats\.fullFormats\.uri/, 'used under the expression require() had')
})

t.test('the committed validator fills in defaults and reports every failure', async (t) => {
  const doc: Record<string, unknown> = { routes: [{ location: '/a', handler: './a.ts', server: { name: 'a', version: '1.0.0' } }] }
  t.ok(validateSchema(doc), 'a minimal config passes')
  t.match(doc, { listen: { host: '127.0.0.1', port: 8080 } }, 'defaults written in')
  t.notOk(validateSchema({ routes: [], workers: 0, unknown: 1 }), 'a broken one fails')
  t.same(validateSchema.errors?.map((e) => `${e.keyword} ${e.instancePath}`), ['additionalProperties ', 'minimum /workers', 'const /workers', 'anyOf /workers', 'minItems /routes'], 'with every error (allErrors)')
})
