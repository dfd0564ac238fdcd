// The session store contract against the cluster backend: the test process is the worker side
// (ClusterStore) and a forked child holds the sessions (ClusterStoreHost), over a real IPC channel.
// Then what the cluster backend adds: worker caches kept coherent through the primary, and a primary
// that goes away failing requests instead of hanging them.
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { ClusterStore } from '../../gateway/store/cluster-client.ts'
import { StoreUnavailableError } from '../../gateway/store/store.ts'
import { reapOnExit } from './reaper.ts'
import { sessionRecord, storeContract } from './store-contract.ts'

// A child process per contract subtest: more than tap's 30 s for the file on a slow machine.
t.setTimeout(120_000)

const primaryFile = fileURLToPath(new URL('./fixtures/cluster-primary.ts', import.meta.url))

/** Forks a primary holding an empty store; it is killed at teardown. */
async function forkPrimary(t: Test, eventCapacity = 1024, cacheTtl = 90, eventBytes?: number): Promise<ChildProcess> {
  const child = fork(primaryFile, [String(eventCapacity), String(cacheTtl), ...(eventBytes === undefined ? [] : [String(eventBytes)])], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  reapOnExit(child)
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  await once(child, 'message')
  return child
}

storeContract(t, 'cluster', async ({ eventCapacity, cacheTtl, eventBytes }) => {
  // A fresh primary per store: the contract closes the store, and the child goes with the test.
  const child = await forkPrimary(t, eventCapacity, cacheTtl, eventBytes)
  const store = new ClusterStore(child)
  const close = store.close.bind(store)
  store.close = async () => {
    await close()
    child.disconnect()
  }
  return store
})

t.test('the worker caches what it read and what it wrote; a get from the cache sends nothing', async (t) => {
  const child = await forkPrimary(t)
  const store = new ClusterStore(child)
  t.teardown(() => store.close())
  const sent: unknown[] = []
  const send = child.send.bind(child)
  child.send = ((message: unknown, ...rest: never[]) => {
    sent.push(message)
    return send(message as never, ...rest)
  }) as typeof child.send
  await store.create(sessionRecord('s1'), 60_000)
  t.same(await store.get('s1'), sessionRecord('s1'))
  t.match(await store.update('s1', { logLevel: 'error' }), { logLevel: 'error' })
  const calls = sent.length
  for (let n = 0; n < 50; n++) {
    t.equal((await store.get('s1'))?.logLevel, 'error')
    store.touch('s1')
  }
  t.equal(sent.length, calls, '50 gets and touches within the window: no IPC')
  await store.delete('s1')
  t.equal(await store.get('s1'), undefined, 'a delete empties the cache')
})

t.test('a primary that goes away: calls reject with StoreUnavailableError, ready() is false', async (t) => {
  const child = await forkPrimary(t)
  const store = new ClusterStore(child)
  t.teardown(() => store.close())
  await store.create(sessionRecord('s1'), 60_000)
  child.kill('SIGKILL')
  await once(child, 'exit')
  await t.rejects(store.get('s2'), StoreUnavailableError)
  await t.rejects(store.bus.publish('c', { type: 'alive' }), StoreUnavailableError)
  t.equal(await store.ready(), false)
})

t.test('a write answered as failed is not applied later: a stalled primary drops writes past their deadline', async (t) => {
  const child = await forkPrimary(t)
  const store = new ClusterStore(child)
  t.teardown(() => store.close())
  await store.create(sessionRecord('kept'), 60_000)
  await store.create(sessionRecord('other'), 60_000)
  // The primary stalls (SIGSTOP: a long GC or swap in real life) while the worker sends a DELETE and an update.
  child.kill('SIGSTOP')
  const deleting = store.delete('kept')
  const updating = store.update('other', { logLevel: 'error' })
  await t.rejects(deleting, StoreUnavailableError, 'the DELETE is answered as failed (503 to its client)')
  await t.rejects(updating, StoreUnavailableError)
  child.kill('SIGCONT')
  // Reads go to the primary: sessionIds is never cached by the worker.
  t.same((await store.sessionIds('/a')).sort(), ['kept', 'other'], 'the DELETE the client saw fail did not happen when the primary woke')
  t.equal((await store.count('/a')), 2)
  // An update answers with the primary's record: the late one ("error") was never applied, the new one is.
  t.same((await store.update('other', { subscribe: 'file:///x' }))?.logLevel, undefined, 'the late update never was')
  t.equal((await store.update('other', { logLevel: 'debug' }))?.logLevel, 'debug', 'a write sent after the stall is applied')
})
