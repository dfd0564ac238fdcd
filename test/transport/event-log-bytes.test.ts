/**
 * The event log held in bytes, not only in events (issue 26, row 2): a tool whose SSE answer carries
 * the client's input (3.9 MB each) called again and again on one session kept 1,024 events, 953 MB of
 * heap, and kept them after `cache_ttl` (the memory store trimmed only on append or replay). Now one
 * session's log keeps `store.event_bytes` and the store `store.event_bytes_total` in all, and the
 * store's sweep drops expired events, so heap and RSS come back once `cache_ttl` has passed.
 * The byte bound on every backend is in the store contract (test/store/store-contract.ts).
 */
import v8 from 'node:v8'
import vm from 'node:vm'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { ACCEPT_BOTH, socketGateway } from '../fixtures/transport-gateway.ts'
import { eventually } from '../fixtures/waiting.ts'

t.setTimeout(180_000)
v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

const HANDLER = fileURLToPath(new URL('../fixtures/handlers/bounds.ts', import.meta.url))
const MIB = 1024 * 1024
const MESSAGE = 'm'.repeat(3_900_000)
const EVENT_BYTES = 8 * MIB
const TOTAL = 24 * MIB
// RSS keeps what the allocator has not handed back of the ~500 MB this process sent, parsed and wrote
// (the clients are in this process too): measured +67 to +206 MiB after the logs were freed (Node 24
// in a fresh-clone CI run the highest). Without the bounds the logs alone held 484 MB (124 answers
// of 3.9 MB), so this tolerance still catches that; the heap assertions say what the gateway holds.
const RSS_SLACK = 320 * MIB

function memory(): { heap: number; rss: number } {
  gc()
  gc()
  const usage = process.memoryUsage()
  return { heap: usage.heapUsed, rss: usage.rss }
}
const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`

t.test('echoed 3.9 MB answers: a session keeps event_bytes, the store event_bytes_total, and all is freed after cache_ttl', async (t) => {
  const gateway = await socketGateway(t, { handler: HANDLER }, { store: { type: 'memory', cache_ttl: 2, event_bytes: EVENT_BYTES, event_bytes_total: TOTAL } })
  const store = gateway.store as MemoryStore
  const url = `${gateway.url}/mcp`
  const headers = { accept: ACCEPT_BOTH, 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' }
  const session = async (): Promise<string> => {
    const init = await fetch(url, { method: 'POST', headers, body: '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}' })
    await init.text()
    return init.headers.get('mcp-session-id')!
  }
  let calls = 0
  const echo = async (sessionId: string): Promise<void> => {
    const id = ++calls
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo-stream', arguments: { message: MESSAGE }, _meta: { progressToken: id } } })
    const response = await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId }, body })
    const text = await response.text()
    if (!response.headers.get('content-type')?.startsWith('text/event-stream') || !text.includes(`"id":${id},"result"`)) throw new Error(`not an SSE answer: ${text.slice(0, 200)}`)
  }

  const before = memory()
  const one = await session()
  for (let n = 0; n < 64; n++) await echo(one)
  const afterOne = memory()
  t.comment(`64 answers of 3.9 MB on one session: the log holds ${mib(store.heldEventBytes)}; heap +${mib(afterOne.heap - before.heap)}, RSS +${mib(afterOne.rss - before.rss)} (250 MB without the bound)`)
  t.ok(store.heldEventBytes <= EVENT_BYTES + MESSAGE.length + 1024, 'one session keeps event_bytes (and its newest event)')
  t.ok(afterOne.heap - before.heap < 64 * MIB, 'the heap holds what the bound allows, not every answer')

  const sessions = await Promise.all(Array.from({ length: 6 }, session))
  for (let n = 0; n < 10; n++) await Promise.all(sessions.map(echo))
  const afterMany = memory()
  t.comment(`60 more over six sessions: the log holds ${mib(store.heldEventBytes)}; heap +${mib(afterMany.heap - before.heap)}, RSS +${mib(afterMany.rss - before.rss)} (234 MB more without the bound)`)
  t.ok(store.heldEventBytes <= TOTAL + MESSAGE.length + 1024, 'the store keeps event_bytes_total in all')
  t.ok(afterMany.heap - before.heap < 64 * MIB, 'the heap holds what the total allows')
  // RSS is not asserted here: right after six concurrent 3.9 MB exchanges it still holds the
  // allocator's pages of their transient copies (request, parse, SSE frame, the client's read), which
  // varied 180-210 MiB between runs with the log at 22 MiB. What is held is the heap, checked above;
  // RSS is checked once the traffic is over, below.

  // Nothing appends or replays now: the sweep (every 5 s) drops what cache_ttl (2 s) expired.
  await eventually(() => store.heldEventBytes === 0, 15_000)
  const after = memory()
  t.comment(`after cache_ttl: the log holds ${store.heldEventBytes} bytes; heap ${mib(after.heap - before.heap)} from the start, RSS ${mib(after.rss - before.rss)}`)
  t.ok(after.heap - before.heap < 16 * MIB, 'the heap is back near where it was')
  t.ok(after.rss - before.rss < RSS_SLACK, 'RSS too (without the sweep it held every log until DELETE)')
})

t.test('the sweep drops expired events of a session nobody appends to or replays', async (t) => {
  const store = new MemoryStore({ eventCapacity: 1024, cacheTtl: 0.1, sweepIntervalMs: 50 })
  t.teardown(() => store.close())
  await store.create({ id: 's', route: '/r', protocolVersion: '2025-11-25', clientInfo: undefined, clientCapabilities: {}, principal: undefined, createdAt: 0, initialized: true, logLevel: undefined, subscriptions: [], hidden: [] }, 60_000)
  await store.append('s', 'a', 'x'.repeat(1000))
  t.equal(store.heldEventBytes, 1000)
  await eventually(() => store.heldEventBytes === 0, 2000)
  t.equal(store.peek('s')?.id, 's', 'the session itself lives on')
})

t.test('deleting a session gives its log back', async (t) => {
  const store = new MemoryStore({ eventCapacity: 1024, cacheTtl: 60 })
  t.teardown(() => store.close())
  await store.create({ id: 's', route: '/r', protocolVersion: '2025-11-25', clientInfo: undefined, clientCapabilities: {}, principal: undefined, createdAt: 0, initialized: true, logLevel: undefined, subscriptions: [], hidden: [] }, 60_000)
  await store.append('s', 'a', 'x'.repeat(5000))
  await store.delete('s')
  t.equal(store.heldEventBytes, 0)
})
