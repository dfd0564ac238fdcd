/**
 * The depth scan against the depth of what JSON.parse builds: for any JSON value, `exceedsDepth`
 * says "deeper than max" exactly when it is, whether the quick count of openers settles it or the
 * exact scan (strings skipped, escapes honoured) has to.
 */
import fc from 'fast-check'
import t from 'tap'
import { exceedsDepth, exceedsValues } from '../../gateway/transport/json-text.ts'

/** Nesting depth of a parsed value: 1 for an array or object with only scalars in it. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  const children = Array.isArray(value) ? value : Object.values(value)
  return 1 + children.reduce<number>((deepest, child) => Math.max(deepest, depthOf(child)), 0)
}

t.test('agrees with the parsed depth, strings full of brackets and quotes included', async (t) => {
  const text = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ' ') })
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small', maxDepth: 12 }, text, fc.integer(), fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(text, tie('node'), { maxKeys: 3 })),
  })).node
  let checked = 0
  fc.assert(
    fc.property(value, fc.integer({ min: 1, max: 10 }), (parsed, max) => {
      const json = JSON.stringify(parsed)
      checked++
      return exceedsDepth(json, max) === depthOf(parsed) > max
    }),
    { numRuns: 2000 },
  )
  t.equal(checked, 2000)
})

t.test('at the bound and one past it, with many shallow openers', async (t) => {
  const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n)
  t.equal(exceedsDepth(nested(64), 64), false, '64 deep with max 64')
  t.equal(exceedsDepth(nested(65), 64), true, '65 deep with max 64')
  t.equal(exceedsDepth(`[${'{},'.repeat(500)}{}]`, 64), false, '501 sibling objects are 2 deep')
  t.equal(exceedsDepth(JSON.stringify({ s: '['.repeat(200) }), 64), false, 'brackets in a string do not nest')
})

t.test('a text no longer than a bound is settled by its length, exactly at the bound', async (t) => {
  // Unclosed openers: the shortest texts that reach a depth, as long as the depth they reach.
  t.equal(exceedsDepth('['.repeat(8), 8), false, '8 characters cannot nest 9 deep')
  t.equal(exceedsDepth('['.repeat(9), 8), true, '9 openers nest 9 deep')
  t.equal(exceedsDepth(`{"a":${'['.repeat(8)}`, 8), true, 'past the bound in length, counted')
  t.equal(exceedsValues(','.repeat(8), 8), false, '8 commas are 8 values')
  t.equal(exceedsValues(','.repeat(9), 8), true, '9 commas are more than 8')
  t.equal(exceedsValues('[1,2,3,4,5,6,7,8]', 8), false, 'an array and 7 commas are 8 values')
  t.equal(exceedsValues('[1,2,3,4,5,6,7,8,9]', 8), true, 'an array and 8 commas are 9')
})
