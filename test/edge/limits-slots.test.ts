/**
 * The per-session slot count (concurrent_requests_per_session) on one process: a session's count
 * stays at 0 after its last request rather than being deleted (a delete per request made V8 shrink the
 * Map's table each time), and those idle entries are swept, so what is kept stays bounded however many
 * sessions come and go.
 */
import t from 'tap'
import { RouteLimits, SWEEP_FLOOR } from '../../gateway/edge/limits.ts'
import { MemoryLimiter } from '../../gateway/store/limiter-memory.ts'

const quotas = (concurrent: number) => ({ rate: [], sessions_per_principal: 0, concurrent_requests_per_session: concurrent })

t.test('slots are held, refused over the bound and given back', async (t) => {
  const limits = RouteLimits.of('/mcp', quotas(2), new MemoryLimiter({ alive: () => true }))!
  t.equal(limits.check(undefined, 's1', undefined), true, 'first request holds a slot')
  t.equal(limits.check(undefined, 's1', undefined), true, 'second too')
  t.match(limits.check(undefined, 's1', undefined), { kind: 'busy' }, 'a third is over the bound')
  limits.done('s1')
  t.equal(limits.check(undefined, 's1', undefined), true, 'a slot given back is taken again')
  limits.done('s1')
  limits.done('s1')
  limits.done('s1')
  t.equal(limits.check(undefined, 's1', undefined), true, 'more done() than requests gives no extra slot')
  t.equal(limits.check(undefined, 's1', undefined), true)
  t.match(limits.check(undefined, 's1', undefined), { kind: 'busy' }, 'still two at most')
})

t.test('sessions that come and go leave a bounded count behind', async (t) => {
  const limits = RouteLimits.of('/mcp', quotas(4), new MemoryLimiter({ alive: () => true }))!
  let largest = 0
  let held = 0
  for (let n = 0; n < SWEEP_FLOOR * 5; n++) {
    const session = `session-${n}`
    if (limits.check(undefined, session, undefined) === true) held++
    limits.done(session)
    largest = Math.max(largest, limits.slotEntries)
  }
  t.equal(held, SWEEP_FLOOR * 5, 'every request held its slot')
  t.ok(largest <= SWEEP_FLOOR + 1, `at most ${SWEEP_FLOOR + 1} entries (largest seen: ${largest})`)

  // Sessions with requests in flight are never swept: their slots stay counted.
  const busy = Array.from({ length: SWEEP_FLOOR }, (_, n) => `busy-${n}`)
  for (const session of busy) for (let i = 0; i < 4; i++) limits.check(undefined, session, undefined)
  for (let n = 0; n < SWEEP_FLOOR * 3; n++) {
    limits.check(undefined, `idle-${n}`, undefined)
    limits.done(`idle-${n}`)
  }
  t.ok(limits.slotEntries <= 2 * SWEEP_FLOOR + 1, `entries stay within twice the busy sessions (${limits.slotEntries})`)
  t.ok(busy.every((session) => typeof limits.check(undefined, session, undefined) === 'object'), 'every busy session is still full')
})
