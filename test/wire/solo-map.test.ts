/**
 * SoloMap (wire/solo-map.ts) holds what a Map holds: the same entries after any sequence of sets and
 * deletes, whether one entry comes and goes (its two fields) or several overlap (its Map besides).
 */
import fc from 'fast-check'
import t from 'tap'
import { SoloMap } from '../../gateway/wire/solo-map.ts'

type Step = { op: 'set'; key: number; value: number } | { op: 'delete'; key: number } | { op: 'clear' }

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('set' as const), key: fc.integer({ min: 0, max: 5 }), value: fc.integer() }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 5 }) }), weight: 4 },
  { arbitrary: fc.constant({ op: 'clear' as const }), weight: 1 },
)

t.test('after any sets and deletes it holds what a Map holds', async (t) => {
  fc.assert(fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
    const solo = new SoloMap<number, number>()
    const map = new Map<number, number>()
    for (const s of steps) {
      if (s.op === 'set') {
        solo.set(s.key, s.value)
        map.set(s.key, s.value)
      } else if (s.op === 'delete') {
        if (solo.delete(s.key) !== map.delete(s.key)) return false
      } else {
        solo.clear()
        map.clear()
      }
      if (solo.size !== map.size) return false
      for (let key = 0; key <= 5; key++) if (solo.get(key) !== map.get(key) || solo.has(key) !== map.has(key)) return false
      const entries = [...solo].sort((a, b) => a[0] - b[0])
      if (JSON.stringify(entries) !== JSON.stringify([...map].sort((a, b) => a[0] - b[0]))) return false
    }
    return true
  }), { numRuns: 500 })
  t.pass('500 random sequences agree with Map')
})

t.test('deleting while iterating visits each entry once, as a Map does', async (t) => {
  const solo = new SoloMap<string, number>()
  solo.set('a', 1).set('b', 2).set('c', 3)
  const seen: string[] = []
  for (const [key] of solo) {
    seen.push(key)
    solo.delete(key)
  }
  t.same(seen.sort(), ['a', 'b', 'c'])
  t.equal(solo.size, 0)
  solo.set('d', 4)
  t.same([...solo.keys()], ['d'], 'the lone entry again once all went')
  t.same([...solo.values()], [4])
})
