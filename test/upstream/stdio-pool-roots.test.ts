/**
 * stdio-pool-roots.ts on its own: when a new child's first requests may go. The real server that
 * needs it (server-filesystem behind `isolation: session`) is in stdio-roots.test.ts.
 */
import t from 'tap'
import { ROOTS_ANSWER_MS, ROOTS_APPLY_MS, ROOTS_ASK_MS, RootsSettle } from '../../gateway/upstream/stdio-pool-roots.ts'

const WITH_ROOTS = { protocolVersion: '2025-11-25', capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'c', version: '1' } }
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

t.test('a handshake without roots waits for nothing', async (t) => {
  t.equal(RootsSettle.for({}, { ...WITH_ROOTS, capabilities: { sampling: {} } }), undefined)
})

t.test('a child that asks: its requests wait for the answer, then the time to apply it', async (t) => {
  const upstream = {}
  const settle = RootsSettle.for(upstream, WITH_ROOTS)!
  settle.initialized()
  settle.asked(7)
  await sleep(ROOTS_APPLY_MS * 2)
  t.notOk(settle.settled, 'not while the client has not answered')
  settle.written(8)
  await sleep(ROOTS_APPLY_MS * 2)
  t.notOk(settle.settled, 'another answer is not the roots\' one')
  const written = Date.now()
  settle.written(7)
  await settle.done
  t.ok(Date.now() - written >= ROOTS_APPLY_MS - 5, 'the child had its time to apply them')
  t.ok(RootsSettle.for(upstream, WITH_ROOTS) !== undefined, 'this upstream\'s next child waits too')
})

t.test('a child that does not ask within the window: its requests go, and the upstream\'s next children do not wait', async (t) => {
  const upstream = {}
  const settle = RootsSettle.for(upstream, WITH_ROOTS)!
  const started = Date.now()
  settle.initialized()
  await settle.done
  t.ok(Date.now() - started >= ROOTS_ASK_MS - 5, `waited the ask window (${ROOTS_ASK_MS} ms)`)
  t.equal(RootsSettle.for(upstream, WITH_ROOTS), undefined, 'learnt: no wait for the next child')
  t.ok(RootsSettle.for({}, WITH_ROOTS) !== undefined, 'another upstream (or the next generation\'s config) learns anew')
  RootsSettle.askedBy(upstream)
  t.ok(RootsSettle.for(upstream, WITH_ROOTS) !== undefined, 'a child that asks later, past the window, has the next children wait again')
})

t.test('a child that goes away ends the wait at once', async (t) => {
  const settle = RootsSettle.for({}, WITH_ROOTS)!
  settle.initialized()
  settle.end()
  await settle.done
  t.ok(settle.settled)
})

t.test('a client that never answers the child\'s roots/list holds its first requests no longer than the answer bound', async (t) => {
  const settle = RootsSettle.for({}, WITH_ROOTS)!
  settle.initialized()
  const asked = Date.now()
  settle.asked(1)
  await settle.done
  const waited = Date.now() - asked
  t.ok(waited >= ROOTS_ANSWER_MS - 5 && waited < ROOTS_ANSWER_MS + 2000, `went on after ${waited} ms (bound ${ROOTS_ANSWER_MS} ms)`)
})
