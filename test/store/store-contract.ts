/**
 * The contract every `SessionStore` backend keeps, written once: `memory.test.ts` runs it against
 * MemoryStore, and the cluster and Redis backends run the same suite. Expiry and the event-log bounds
 * are checked with short limits and real waiting, so a backend is tested with the clock it really uses.
 *
 *   storeContract(t, 'redis', async (limits) => new RedisStore({ ...limits, url }))
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { Bus, BusMessage, SessionRecord, SessionStore, StoredEvent } from '../../gateway/store/store.ts'
import { parseEventId } from '../../gateway/store/store.ts'

/** The event-log bounds a backend must be built with (the config's `event_capacity`, `cache_ttl` in seconds, `event_bytes`). */
export interface StoreLimits {
  eventCapacity: number
  cacheTtl: number
  eventBytes?: number
}

/** Makes a fresh, empty store with the given limits; the suite closes it. */
export type MakeStore = (limits: StoreLimits) => Promise<SessionStore>

/** Limits loose enough that nothing is trimmed during a test that is not about trimming. */
const ROOMY: StoreLimits = { eventCapacity: 1000, cacheTtl: 60 }
const HOUR_MS = 3_600_000

/** A session record with every field set, so a backend that loses one is caught. */
export function sessionRecord(id: string, route = '/a'): SessionRecord {
  return {
    id,
    route,
    protocolVersion: '2025-11-25',
    clientInfo: { name: 'contract-client', version: '1.2.3' },
    clientCapabilities: { roots: { listChanged: true }, sampling: {} },
    principal: 'alice',
    createdAt: 1_700_000_000_000,
    initialized: false,
    logLevel: undefined,
    subscriptions: [],
    hidden: [],
  }
}

/** Subscribes to a channel and keeps what arrives; `arrived(n)` waits until n messages are in. */
function listen(t: Test, bus: Bus, channel: string) {
  const messages: BusMessage[] = []
  const waiters: Array<() => void> = []
  const unsubscribe = bus.subscribe(channel, (message) => {
    messages.push(message)
    for (const wake of waiters.splice(0)) wake()
  })
  t.teardown(unsubscribe)
  async function arrived(count: number, timeoutMs = 2000): Promise<BusMessage[]> {
    const deadline = Date.now() + timeoutMs
    while (messages.length < count) {
      if (Date.now() > deadline) throw new Error(`${channel}: ${messages.length} of ${count} messages arrived`)
      await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), sleep(20)])
    }
    return messages
  }
  return { messages, arrived, unsubscribe }
}

export function storeContract(t: Test, name: string, makeStore: MakeStore): void {
  /** A fresh store for one subtest, closed when the subtest ends. */
  async function fresh(t: Test, limits: StoreLimits = ROOMY): Promise<SessionStore> {
    const store = await makeStore(limits)
    t.teardown(() => store.close())
    return store
  }

  const ids = (events: readonly StoredEvent[] | undefined) => events?.map((event) => event.id)

  t.test(`${name}: session store contract`, async (t) => {
    t.test('create then get returns the record as created', async (t) => {
      const store = await fresh(t)
      t.equal(await store.ready(), true, 'ready')
      t.equal(await store.get('s1'), undefined, 'unknown before create')
      await store.create(sessionRecord('s1'), HOUR_MS)
      t.same(await store.get('s1'), sessionRecord('s1'), 'every field kept')
      t.equal(await store.get('s2'), undefined, 'another id stays unknown')
    })

    t.test('peek answers without waiting and is never wrong: the record get would give, or undefined', async (t) => {
      const store = await fresh(t)
      t.equal(store.peek('s1'), undefined, 'unknown before create')
      await store.create(sessionRecord('s1'), HOUR_MS)
      const peeked = store.peek('s1')
      if (peeked !== undefined) t.same(peeked, await store.get('s1'), 'a peeked record is the stored one')
      await store.get('s1')
      await store.update('s1', { logLevel: 'error' })
      const afterUpdate = store.peek('s1')
      if (afterUpdate !== undefined) t.equal(afterUpdate.logLevel, 'error', 'never the record from before an update')
      await store.delete('s1')
      t.equal(store.peek('s1'), undefined, 'nothing after delete')
    })

    t.test('a duplicate create rejects and leaves the first record alone', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1', '/a'), HOUR_MS)
      await t.rejects(store.create(sessionRecord('s1', '/a'), HOUR_MS), 'same route')
      await t.rejects(store.create(sessionRecord('s1', '/b'), HOUR_MS), 'ids are unique across routes too')
      t.equal((await store.get('s1'))?.route, '/a')
      t.equal(await store.count('/a'), 1)
      t.equal(await store.count('/b'), 0)
    })

    t.test('update applies each kind of change and returns the new record', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)

      t.match(await store.update('s1', { initialized: true }), { id: 's1', initialized: true })
      t.match(await store.update('s1', { logLevel: 'warning' }), { logLevel: 'warning' })
      t.match(await store.update('s1', { logLevel: 'debug' }), { logLevel: 'debug' }, 'a later level replaces the earlier')

      await store.update('s1', { subscribe: 'file:///a' })
      await store.update('s1', { subscribe: 'file:///b' })
      t.same((await store.update('s1', { subscribe: 'file:///a' }))?.subscriptions, ['file:///a', 'file:///b'], 'subscribe twice keeps one')
      t.same((await store.update('s1', { unsubscribe: 'file:///a' }))?.subscriptions, ['file:///b'])
      t.same((await store.update('s1', { unsubscribe: 'file:///never' }))?.subscriptions, ['file:///b'], 'unsubscribing an unknown uri is a no-op')

      await store.update('s1', { hide: 'tool:echo' })
      t.same((await store.update('s1', { hide: 'tool:echo' }))?.hidden, ['tool:echo'], 'hide twice keeps one')
      await store.update('s1', { hide: 'prompt:greet' })
      t.same((await store.update('s1', { show: 'tool:echo' }))?.hidden, ['prompt:greet'])

      t.same(await store.get('s1'), {
        ...sessionRecord('s1'),
        initialized: true,
        logLevel: 'debug',
        subscriptions: ['file:///b'],
        hidden: ['prompt:greet'],
      }, 'get sees every change')
      t.equal(await store.update('nobody', { initialized: true }), undefined, 'an unknown session')
    })

    t.test('upstream sessions: kept per upstream, replaced, forgotten, and seen by every reader', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)
      const docs = { id: 'u-1', protocolVersion: '2025-11-25', capabilities: { tools: { listChanged: true }, logging: {} }, serverInfo: { name: 'docs', version: '1.0.0' } }
      const ws = { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'ws "quoted"/\\ ü', version: '2' } }
      t.same((await store.update('s1', { upstream: 'docs', session: docs }))?.upstreams, { docs }, 'the first upstream session')
      await store.update('s1', { logLevel: 'info' })
      t.same((await store.update('s1', { upstream: 'ws', session: ws }))?.upstreams, { docs, ws }, 'another beside it, other changes between them kept')
      const renewed = { ...docs, id: 'u-2' }
      t.same((await store.update('s1', { upstream: 'docs', session: renewed }))?.upstreams, { docs: renewed, ws }, 'a re-initialized one replaces it')
      t.same((await store.get('s1'))?.upstreams, { docs: renewed, ws }, 'get sees them')
      t.equal((await store.get('s1'))?.logLevel, 'info')
      t.same((await store.update('s1', { upstream: 'ws', session: null }))?.upstreams, { docs: renewed }, 'forgotten')
      t.same((await store.update('s1', { upstream: 'docs', session: null }))?.upstreams, undefined, 'none left: the field is gone')
      await store.update('s1', { subscribe: 'file:///x' })
      t.same(await store.get('s1'), { ...sessionRecord('s1'), logLevel: 'info', subscriptions: ['file:///x'] }, 'the record is as before')
    })

    t.test('an addition with max is skipped once the list is full, even when many race', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)
      const uris = Array.from({ length: 10 }, (_, i) => `file:///${i}`)
      await Promise.all(uris.map((uri) => store.update('s1', { subscribe: uri, max: 3 })))
      t.equal((await store.get('s1'))?.subscriptions.length, 3, 'three of ten concurrent subscribes kept')
      const held = (await store.get('s1'))!.subscriptions[0]!
      t.equal((await store.update('s1', { subscribe: held, max: 3 }))?.subscriptions.length, 3, 'a held one is still held')
      await Promise.all(['a', 'b', 'c'].map((name) => store.update('s1', { hide: `tool:${name}`, max: 2 })))
      t.equal((await store.get('s1'))?.hidden.length, 2, 'hidden set bounded the same way')
    })

    t.test('documents: compare-and-set versions, a session\'s die with it, a route\'s outlive sessions', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)
      const state = { session: 's1', name: 'state' } as const
      t.equal(await store.readDoc(state), undefined, 'none before the first write')
      t.same(await store.writeDoc(state, 0, '{"n":1}'), { version: 1 })
      t.equal(await store.writeDoc(state, 0, '{"n":9}'), 'conflict', 'a stale version does not write')
      t.same(await store.writeDoc(state, 1, '{"n":2}'), { version: 2 })
      t.same(await store.readDoc(state), { version: 2, value: '{"n":2}' })
      t.equal(await store.readDoc({ session: 's1', name: 'catalogue' }), undefined, 'the other document is apart')
      const catalogue = await store.update('s1', { catalogue: 7 })
      t.equal(catalogue?.catalogue, 7, 'the record points at a catalogue version')
      t.equal((await store.update('s1', { logLevel: 'info' }))?.catalogue, 7, 'and keeps it through other changes')
      t.equal((await store.get('s1'))?.catalogue, 7)
      const route = { route: '/a', name: 'catalogue' } as const
      t.same(await store.writeDoc(route, 0, '{}'), { version: 1 })
      store.touch('s1')
      t.equal(await store.delete('s1'), true)
      t.equal(await store.readDoc(state), undefined, 'the session\'s documents went with it')
      t.equal(await store.writeDoc(state, 0, '{}'), 'gone', 'and cannot be written again')
      t.same(await store.readDoc(route), { version: 1, value: '{}' }, 'the route\'s stays')
      // Concurrent read-change-write loops lose no update: compare-and-set makes them atomic.
      await store.create(sessionRecord('s2'), HOUR_MS)
      const counter = { session: 's2', name: 'state' } as const
      const increment = async (): Promise<void> => {
        for (;;) {
          const doc = await store.readDoc(counter)
          const n = doc === undefined ? 0 : (JSON.parse(doc.value) as number)
          if ((await store.writeDoc(counter, doc?.version ?? 0, JSON.stringify(n + 1))) !== 'conflict') return
        }
      }
      await Promise.all(Array.from({ length: 12 }, increment))
      t.equal((await store.readDoc(counter))?.value, '12', 'twelve concurrent increments, twelve counted')
    })

    t.test('delete ends the session; a second delete reports it gone', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)
      await store.create(sessionRecord('s2'), HOUR_MS)
      t.equal(await store.delete('s1'), true)
      t.equal(await store.delete('s1'), false)
      t.equal(await store.delete('never'), false)
      t.equal(await store.get('s1'), undefined)
      t.equal(await store.update('s1', { initialized: true }), undefined, 'update finds nothing')
      t.equal(await store.count('/a'), 1)
      t.same(await store.sessionIds('/a'), ['s2'])
      await store.create(sessionRecord('s1'), HOUR_MS)
      t.same(await store.get('s1'), sessionRecord('s1'), 'the id can be used again')
    })

    t.test('count and sessionIds are per route', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('a1', '/a'), HOUR_MS)
      await store.create(sessionRecord('a2', '/a'), HOUR_MS)
      await store.create(sessionRecord('b1', '/b'), HOUR_MS)
      t.equal(await store.count('/a'), 2)
      t.equal(await store.count('/b'), 1)
      t.equal(await store.count('/c'), 0)
      t.same((await store.sessionIds('/a')).sort(), ['a1', 'a2'])
      t.same(await store.sessionIds('/b'), ['b1'])
      t.same(await store.sessionIds('/c'), [])
    })

    t.test('idle expiry: a session ends after its TTL without a touch, and touch postpones it', async (t) => {
      // The premise is a timeline: touched before the TTL ran out, read after it ran out and before the
      // touch's TTL does. A machine loaded enough to stretch a sleep or a round trip past those margins
      // (CI runs at load average 20 did, once the last read came 300 ms after the touch) breaks the
      // premise, not the store: such a try is run again, at most three times. The reads are timed too.
      let store = await fresh(t)
      let seen: { count: number, ids: string[], idle: unknown, busy: unknown }
      for (let attempt = 1; ; attempt++) {
        const created = Date.now()
        await store.create(sessionRecord('idle'), 300)
        await store.create(sessionRecord('busy'), 300)
        await store.create(sessionRecord('other', '/b'), HOUR_MS)
        await sleep(150)
        const touched = Date.now()
        store.touch('busy')
        await sleep(220)
        // 370 ms since create: `idle` is past its TTL, `busy` was touched 220 ms ago.
        seen = { count: await store.count('/a'), ids: await store.sessionIds('/a'), idle: await store.get('idle'), busy: await store.get('busy') }
        const read = Date.now()
        if ((touched - created < 200 && read - touched < 280) || attempt === 3) break
        store = await fresh(t)
      }
      t.equal(seen.count, 1, 'count drops the expired session without waiting for a sweep')
      t.same(seen.ids, ['busy'])
      t.equal(seen.idle, undefined, 'expired')
      t.ok(seen.busy, 'touched, so still alive')
      t.equal(await store.update('idle', { initialized: true }), undefined, 'update does not reach an expired session')
      await sleep(350)
      t.equal(await store.get('busy'), undefined, 'expires in turn')
      t.equal(await store.count('/a'), 0)
      t.ok(await store.get('other'), 'a long TTL is unaffected')
    })

    t.test('an expired session stays gone: touch does not revive it, delete reports false', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), 100)
      await store.create(sessionRecord('s2'), 100)
      await sleep(160)
      store.touch('s1')
      t.equal(await store.get('s1'), undefined, 'a touch after the TTL does not bring it back')
      t.equal(await store.delete('s2'), false, 'there was nothing to delete')
      t.equal(await store.count('/a'), 0)
      await store.create(sessionRecord('s1'), HOUR_MS)
      t.same(await store.get('s1'), sessionRecord('s1'), 'an expired id can be created again')
    })

    t.test('append returns ids unique within the session that name their stream', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)
      await store.create(sessionRecord('s2'), HOUR_MS)
      const streams = ['g', 'p-abc1', 'p-abc2', 'g', 'p-abc1', 'p-abc2', 'g']
      const appended: string[] = []
      for (const [index, stream] of streams.entries()) {
        const id = await store.append('s1', stream, `event ${index}`)
        t.equal(parseEventId(id)?.stream, stream, `${id} names stream ${stream}`)
        appended.push(id)
      }
      t.equal(new Set(appended).size, appended.length, 'no id repeats')
      const elsewhere = await store.append('s2', 'g', 'other session')
      t.equal(parseEventId(elsewhere)?.stream, 'g')
      const replayed = await store.replay('s1', appended[0]!)
      t.same(ids(replayed?.events), [appended[3], appended[6]], 'another session’s events do not land in this log')
    })

    t.test('replay returns only the later events of the id’s own stream, in order', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)
      const a1 = await store.append('s1', 'a', '')
      const b1 = await store.append('s1', 'b', '{"n":"b1"}')
      const a2 = await store.append('s1', 'a', '{"n":"a2"}')
      const b2 = await store.append('s1', 'b', '{"n":"b2"}')
      const a3 = await store.append('s1', 'a', '{"n":"a3"}')

      t.same(await store.replay('s1', a1), {
        stream: 'a',
        events: [{ id: a2, data: '{"n":"a2"}' }, { id: a3, data: '{"n":"a3"}' }],
      }, 'after the priming event: the rest of stream a')
      t.same(await store.replay('s1', a2), { stream: 'a', events: [{ id: a3, data: '{"n":"a3"}' }] })
      t.same(await store.replay('s1', a3), { stream: 'a', events: [] }, 'after the last event: nothing missed')
      t.same(await store.replay('s1', b1), { stream: 'b', events: [{ id: b2, data: '{"n":"b2"}' }] })
      const a4 = await store.append('s1', 'a', '{"n":"a4"}')
      t.same(ids((await store.replay('s1', a1))?.events), [a2, a3, a4], 'a replay sees what was appended since')
    })

    t.test('replay of an id the log does not know is undefined', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)
      await store.create(sessionRecord('s2'), HOUR_MS)
      const a1 = await store.append('s1', 'a', 'x')
      t.equal(await store.replay('s1', 'not an event id'), undefined, 'malformed')
      t.equal(await store.replay('s1', 'a/999999'), undefined, 'never issued')
      t.equal(await store.replay('nobody', a1), undefined, 'unknown session')
      t.equal(await store.replay('s2', a1), undefined, 'issued to another session')
      t.equal(await store.replay('s1', 'invented/0'), undefined, 'a stream the log never held (its number issued)')
    })

    t.test('capacity bound: only the newest event_capacity events are kept', async (t) => {
      const store = await fresh(t, { eventCapacity: 3, cacheTtl: 60 })
      await store.create(sessionRecord('s1'), HOUR_MS)
      const appended: string[] = []
      for (let n = 1; n <= 6; n++) appended.push(await store.append('s1', 'a', `{"n":${n}}`))
      const [e1, e2, e3, e4, e5, e6] = appended
      t.same(await store.replay('s1', e3!), {
        stream: 'a',
        events: [{ id: e4, data: '{"n":4}' }, { id: e5, data: '{"n":5}' }, { id: e6, data: '{"n":6}' }],
      }, 'from the last dropped id: the kept window, whole')
      const early = await store.replay('s1', e1!)
      // A backend may refuse (undefined) a replay that would skip dropped events; it must never return them.
      t.notOk(ids(early?.events)?.some((id) => id === e2 || id === e3), 'dropped events are not replayed')
      if (early !== undefined) t.same(ids(early.events), [e4, e5, e6])
    })

    t.test('byte bound: a log keeps at most event_bytes of data (its newest event whatever its size)', async (t) => {
      const store = await fresh(t, { eventCapacity: 1000, cacheTtl: 60, eventBytes: 4096 })
      await store.create(sessionRecord('s1'), HOUR_MS)
      await store.create(sessionRecord('s2'), HOUR_MS)
      const kilobyte = (n: number) => `{"n":${n},"pad":"${'x'.repeat(900)}"}`
      const appended: string[] = []
      for (let n = 1; n <= 10; n++) appended.push(await store.append('s1', 'a', kilobyte(n)))
      const other = await store.append('s2', 'a', kilobyte(0))
      const kept = await store.replay('s1', appended[5]!)
      t.same(ids(kept?.events), appended.slice(6), 'after the sixth: the rest, the newest kept')
      const early = await store.replay('s1', appended[0]!)
      const total = (early?.events ?? []).reduce((sum, event) => sum + event.data.length, 0)
      t.ok(total <= 4096, `at most 4096 bytes replayed from the first id (${total})`)
      t.notOk(ids(early?.events)?.includes(appended[1]!), 'the oldest were dropped')
      const huge = await store.append('s1', 'a', `"${'y'.repeat(10_000)}"`)
      t.same(ids((await store.replay('s1', appended[9]!))?.events), [huge], 'one event over the bound is kept alone, the newest')
      const second = await store.append('s2', 'a', kilobyte(1))
      t.same(ids((await store.replay('s2', other))?.events), [second], 'another session keeps its own')
    })

    t.test('age bound: events older than cache_ttl are dropped', async (t) => {
      const store = await fresh(t, { eventCapacity: 1000, cacheTtl: 0.2 })
      await store.create(sessionRecord('s1'), HOUR_MS)
      const old1 = await store.append('s1', 'a', '{"n":1}')
      const old2 = await store.append('s1', 'a', '{"n":2}')
      t.same(ids((await store.replay('s1', old1))?.events), [old2], 'young: still there')
      await sleep(320)
      const fresh3 = await store.append('s1', 'a', '{"n":3}')
      const fromOld1 = await store.replay('s1', old1)
      t.notOk(ids(fromOld1?.events)?.includes(old2), 'the expired event is not replayed')
      const fromOld2 = await store.replay('s1', old2)
      t.same(fromOld2, { stream: 'a', events: [{ id: fresh3, data: '{"n":3}' }] }, 'after the expired id: the young event')
    })

    t.test('delete drops the event log', async (t) => {
      const store = await fresh(t)
      await store.create(sessionRecord('s1'), HOUR_MS)
      const a1 = await store.append('s1', 'a', 'x')
      await store.append('s1', 'a', 'y')
      await store.delete('s1')
      t.equal(await store.replay('s1', a1), undefined, 'gone with the session')
      await store.create(sessionRecord('s1'), HOUR_MS)
      t.equal(await store.replay('s1', a1), undefined, 'a new session with the same id starts an empty log')
    })

    t.test('bus: publish reaches the channel’s subscribers, in order, until they unsubscribe', async (t) => {
      const store = await fresh(t)
      const first = listen(t, store.bus, 'route:/a')
      const second = listen(t, store.bus, 'route:/a')
      const elsewhere = listen(t, store.bus, 'route:/b')

      const published = store.bus.publish('route:/a', { type: 'logged', session: 's1', data: 'one', eventId: '_/1' })
      t.equal(first.messages.length, 0, 'delivery does not happen inside publish (a remote bus cannot)')
      await published
      await store.bus.publish('route:/a', { type: 'logged', session: 's1', data: 'two', eventId: '_/2' })
      await store.bus.publish('route:/a', { type: 'ended', session: 's1', from: 'w3' })
      t.same(await first.arrived(3), [
        { type: 'logged', session: 's1', data: 'one', eventId: '_/1' },
        { type: 'logged', session: 's1', data: 'two', eventId: '_/2' },
        { type: 'ended', session: 's1', from: 'w3' },
      ], 'every message, payload intact, in publish order')
      t.same(await second.arrived(3), first.messages, 'each subscriber gets every message')

      second.unsubscribe()
      await store.bus.publish('route:/a', { type: 'resource', uri: 'a://4' })
      await store.bus.publish('route:/b', { type: 'resource', uri: 'a://5' })
      await first.arrived(4)
      t.same(await elsewhere.arrived(1), [{ type: 'resource', uri: 'a://5' }], 'only its own channel')
      t.equal(second.messages.length, 3, 'nothing after unsubscribe')
      await t.resolves(store.bus.publish('route:/nobody', { type: 'alive' }), 'publishing to a channel nobody hears is fine')
    })

    t.test('task table: compare-and-set writes, expiry, and listing by owner', async (t) => {
      const { tasks } = await fresh(t)
      t.equal(await tasks.read('task:1'), undefined, 'unknown before the first write')
      t.equal(await tasks.write('task:1', 'one', 0, HOUR_MS, 'p:alice'), 1, 'created at version 1')
      t.equal(await tasks.write('task:1', 'again', 0, HOUR_MS, 'p:alice'), 0, 'a second create loses')
      t.same(await tasks.read('task:1'), { version: 1, data: 'one' })
      t.equal(await tasks.write('task:1', 'two', 1, HOUR_MS, 'p:alice'), 2, 'a write naming the current version wins')
      t.equal(await tasks.write('task:1', 'stale', 1, HOUR_MS, 'p:alice'), 0, 'one naming an old version loses')
      t.same(await tasks.read('task:1'), { version: 2, data: 'two' }, 'and changes nothing')
      await tasks.write('task:2', 'other', 0, HOUR_MS, 'p:alice')
      await tasks.write('task:3', 'bob\'s', 0, HOUR_MS, 'p:bob')
      await tasks.write('worker:w1', 'beat', 0, HOUR_MS)
      t.same((await tasks.list('p:alice', 10)).sort(), ['other', 'two'], 'an owner\'s entries, as last written')
      t.equal((await tasks.list('p:alice', 1)).length, 1, 'at most max')
      t.same(await tasks.list('p:carol', 10), [], 'an owner with none')
      t.same([await tasks.count('p:alice'), await tasks.count('p:bob'), await tasks.count('p:carol')], [2, 1, 0], 'counted by owner')

      await tasks.write('task:4', 'brief', 0, 150, 'p:bob')
      t.same((await tasks.list('p:bob', 10)).sort(), ['bob\'s', 'brief'])
      await sleep(400)
      t.equal(await tasks.read('task:4'), undefined, 'gone after its TTL')
      t.same(await tasks.list('p:bob', 10), ['bob\'s'], 'and no longer listed')
      t.equal(await tasks.count('p:bob'), 1, 'nor counted')
      t.equal(await tasks.write('task:4', 'reborn', 0, HOUR_MS, 'p:bob'), 1, 'an expired key is absent again')
    })
  })
}
