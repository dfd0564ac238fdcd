// The session store contract, run against the one-process backend, and the config that builds it.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { createStore } from '../../gateway/store/create-store.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { sessionRecord, storeContract } from './store-contract.ts'

storeContract(t, 'memory', async (limits) => new MemoryStore(limits))

t.test('createStore builds a MemoryStore from event_capacity and cache_ttl', async (t) => {
  const bounded = createStore({ type: 'memory', event_capacity: 2, cache_ttl: 90, event_bytes: 1 << 20, event_bytes_total: 1 << 24, session_bytes_total: 1 << 24, session_bytes_per_principal: 1 << 24 })
  t.teardown(() => bounded.close())
  t.ok(bounded instanceof MemoryStore)
  await bounded.create(sessionRecord('s1'), 60_000)
  const [e1, e2, e3, e4] = [await bounded.append('s1', 'a', '1'), await bounded.append('s1', 'a', '2'), await bounded.append('s1', 'a', '3'), await bounded.append('s1', 'a', '4')]
  t.same((await bounded.replay('s1', e2))?.events, [{ id: e3, data: '3' }, { id: e4, data: '4' }])
  t.notOk((await bounded.replay('s1', e1))?.events.some((event) => event.id === e2), 'event_capacity 2 dropped the second event')

  const shortLived = createStore({ type: 'memory', event_capacity: 1024, cache_ttl: 0.05, event_bytes: 1 << 20, event_bytes_total: 1 << 24, session_bytes_total: 1 << 24, session_bytes_per_principal: 1 << 24 })
  t.teardown(() => shortLived.close())
  await shortLived.create(sessionRecord('s1'), 60_000)
  const old1 = await shortLived.append('s1', 'a', '1')
  const old2 = await shortLived.append('s1', 'a', '2')
  await sleep(120)
  await shortLived.append('s1', 'a', '3')
  t.notOk((await shortLived.replay('s1', old1))?.events.some((event) => event.id === old2), 'cache_ttl 0.05 s dropped the old event')
})

t.test('the memory store answers the hot path synchronously: peek is the record, appendNow an id in order', async (t) => {
  const store = new MemoryStore({ eventCapacity: 16, cacheTtl: 600 })
  t.teardown(() => store.close())
  await store.create(sessionRecord('s1'), 60_000)
  t.same(store.peek('s1'), sessionRecord('s1'), 'peek is authoritative here: the record itself')
  const first = store.appendNow('s1', 'a', 'one')
  const second = await store.append('s1', 'a', 'two')
  const third = store.appendNow('s1', 'a', 'three')
  t.same((await store.replay('s1', first))?.events, [{ id: second, data: 'two' }, { id: third, data: 'three' }], 'appendNow and append share one sequence')
})
