/**
 * The audit record's argument digest: canonicalJson (keys sorted at every depth) takes V8's own
 * serialiser when the arguments are canonical as sent, and must write exactly what the plain sorted
 * serialisation writes for any JSON value, canonical or not (fast-check).
 */
import fc from 'fast-check'
import t from 'tap'
import { canonicalJson } from '../../gateway/wire/canonical-json.ts'

/** The definition: keys sorted at every depth, undefined members left out. */
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${reference(record[key])}`).join(',')}}`
}

t.test('canonicalJson writes the sorted serialisation of any JSON value', async (t) => {
  fc.assert(fc.property(fc.jsonValue(), (value) => canonicalJson(value) === reference(value)), { numRuns: 2000 })
  // Parsed text, as arguments arrive: member order as sent, integer-like keys first.
  fc.assert(fc.property(fc.jsonValue(), (value) => {
    const parsed: unknown = JSON.parse(JSON.stringify(value))
    return canonicalJson(parsed) === reference(parsed)
  }), { numRuns: 2000 })
  t.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } }), '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}')
  t.equal(canonicalJson({ 10: 'a', 9: 'b' }), '{"10":"a","9":"b"}', 'integer-like keys in string order, not V8\'s')
  t.equal(canonicalJson({ a: 1, b: [undefined] }), '{"a":1,"b":[null]}')
  t.equal(canonicalJson('x'), '"x"')
})
