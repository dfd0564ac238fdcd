// The store's cache table (gateway/store/cache-table.ts) against every backend (memory, the cluster
// primary over real IPC, a real redis-server): values and expiry, drop and its generation guard, and
// each bound reached (bytes per route, bytes in total, entries per principal) with the oldest going first.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { CacheBounds } from '../../gateway/store/cache-table.ts'
import { storeBackends } from './backends.ts'

const ROOMY: CacheBounds = { routeBytes: 1 << 20, totalBytes: 1 << 20, principalEntries: 100 }

for (const backend of storeBackends) {
  t.test(`cache table on ${backend.name}`, async (t) => {
    const store = await backend.open(t)
    const cache = store.cache
    const entry = (key: string, value: string, extra: { route?: string; group?: string; principal?: string; ttlMs?: number } = {}) => ({
      key, value, ttlMs: extra.ttlMs ?? 60_000, route: extra.route ?? '/a', group: extra.group ?? 'g', principal: extra.principal,
    })

    await t.test('a value is read back until it expires; absent keys read undefined', async (t) => {
      t.ok(await cache.write(entry('k1', 'v1'), 0, ROOMY))
      t.ok(await cache.write(entry('short', 'v2', { ttlMs: 150 }), 0, ROOMY))
      t.same((await cache.read(['k1', 'short', 'nope'], ['g'])).values, ['v1', 'v2', undefined])
      await sleep(400)
      t.same((await cache.read(['k1', 'short'], [])).values, ['v1', undefined], 'the short one expired')
    })

    await t.test('drop removes the group and moves its generation: a write that read the old one is refused', async (t) => {
      const before = await cache.read(['d1'], ['drop-me'])
      t.ok(await cache.write(entry('d1', 'x', { group: 'drop-me' }), before.generations[0]!, ROOMY))
      t.ok(await cache.write(entry('other', 'y', { group: 'keep-me' }), 0, ROOMY))
      await cache.drop('drop-me')
      const after = await cache.read(['d1', 'other'], ['drop-me'])
      t.same(after.values, [undefined, 'y'], 'only the dropped group went')
      t.equal(after.generations[0], before.generations[0]! + 1)
      t.notOk(await cache.write(entry('d1', 'stale', { group: 'drop-me' }), before.generations[0]!, ROOMY), 'the in-flight write of before the drop is refused')
      t.ok(await cache.write(entry('d1', 'fresh', { group: 'drop-me' }), after.generations[0]!, ROOMY))
      t.same((await cache.read(['d1'], [])).values, ['fresh'])
    })

    await t.test('bytes per route: the route\'s oldest entries go; another route keeps its own', async (t) => {
      const bounds: CacheBounds = { routeBytes: 1000, totalBytes: 1 << 20, principalEntries: 100 }
      const value = 'v'.repeat(296) // 300 bytes with a 4-byte key
      t.ok(await cache.write(entry('b/o1', value, { route: '/other' }), 0, bounds))
      for (const key of ['b/r1', 'b/r2', 'b/r3', 'b/r4']) t.ok(await cache.write(entry(key, value, { route: '/bytes' }), 0, bounds))
      const usage = await cache.usage('/bytes')
      t.ok(usage.route <= 1000, `the route holds ${usage.route} bytes, within its 1000`)
      t.same((await cache.read(['b/r1', 'b/r2', 'b/r3', 'b/r4', 'b/o1'], [])).values, [undefined, value, value, value, value], 'the oldest went, the other route kept its entry')
      t.notOk(await cache.write(entry('b/huge', 'v'.repeat(2000), { route: '/bytes' }), 0, bounds), 'one entry over the route bound is not kept')
    })

    await t.test('bytes in total: the oldest of all go first', async (t) => {
      const start = (await cache.usage('/t1')).total
      const bounds: CacheBounds = { routeBytes: 1 << 20, totalBytes: start + 900, principalEntries: 100 }
      const value = 'v'.repeat(296)
      for (const [key, route] of [['t/a1', '/t1'], ['t/b1', '/t2'], ['t/a2', '/t1'], ['t/b2', '/t2']] as const) t.ok(await cache.write(entry(key, value, { route }), 0, bounds))
      const usage = await cache.usage('/t1')
      t.ok(usage.total <= start + 900, `the cache holds ${usage.total} bytes, within ${start + 900}`)
      t.same((await cache.read(['k1', 't/b2'], [])).values, [undefined, value], 'the oldest entry of all (another route\'s, from the start) went; the newest is there')
    })

    await t.test('entries per principal: a principal\'s oldest goes; another principal and public entries stay', async (t) => {
      const bounds: CacheBounds = { routeBytes: 1 << 20, totalBytes: 1 << 20, principalEntries: 2 }
      t.ok(await cache.write(entry('p/bob', 'b', { principal: 'bob' }), 0, bounds))
      t.ok(await cache.write(entry('p/public', 'p'), 0, bounds))
      for (const key of ['p/a1', 'p/a2', 'p/a3']) t.ok(await cache.write(entry(key, key, { principal: 'alice' }), 0, bounds))
      t.same((await cache.read(['p/a1', 'p/a2', 'p/a3', 'p/bob', 'p/public'], [])).values, [undefined, 'p/a2', 'p/a3', 'b', 'p'])
      t.ok(await cache.write(entry('p/a3', 'again', { principal: 'alice' }), 0, bounds), 'rewriting a key of her own is no new entry')
      t.same((await cache.read(['p/a2', 'p/a3'], [])).values, ['p/a2', 'again'])
    })
  })
}
