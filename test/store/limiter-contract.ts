/**
 * The contract every limiter backend keeps, written once and run against the memory, cluster and
 * Redis backends (limiter.test.ts). Rates are checked with short windows and real waiting, so each
 * backend is tested with the clock it really uses (Redis: the server's).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { RECLAIM_IDLE_MS, type LimitRequest, type Limiter, type RateBucket, type Verdict } from '../../gateway/store/limiter.ts'
import type { SessionStore } from '../../gateway/store/store.ts'
import { sessionRecord } from './store-contract.ts'

/** A limiter and the session store it sits beside; `other` is a second limiter on the same counters (another worker or host). */
export interface LimiterUnderTest {
  limiter: Limiter
  other: Limiter
  store: SessionStore
}

export type MakeLimiter = (t: Test) => Promise<LimiterUnderTest>

let keys = 0
/** A bucket of `limit` per `windowMs` under a key no other test uses. */
function bucket(limit: number, windowMs: number): RateBucket {
  return { key: `k${++keys}-${process.pid}-${Date.now()}`, intervalMs: windowMs / limit, windowMs }
}

function rates(buckets: RateBucket[], toolStart = buckets.length): LimitRequest {
  return { buckets, toolStart }
}

/** Takes `n` times in a row and returns the verdicts. */
async function takeMany(limiter: Limiter, request: LimitRequest, n: number): Promise<Verdict[]> {
  const verdicts: Verdict[] = []
  for (let i = 0; i < n; i++) verdicts.push(await limiter.take(request))
  return verdicts
}

export function limiterContract(t: Test, name: string, make: MakeLimiter): void {
  t.test(`${name} limiter: exactly the limit passes in a window, then one per interval`, async (t) => {
    const { limiter } = await make(t)
    const b = bucket(5, 1000)
    const verdicts = await takeMany(limiter, rates([b]), 8)
    t.same(verdicts.slice(0, 5), [undefined, undefined, undefined, undefined, undefined], 'the first 5 pass')
    for (const verdict of verdicts.slice(5)) {
      t.equal(verdict?.bucket, 0, 'the rest are refused by bucket 0')
      t.ok(verdict!.retryAfterMs > 0 && verdict!.retryAfterMs <= 200, `retry after one interval at most (${verdict?.retryAfterMs} ms)`)
    }
    await sleep(verdicts[5]!.retryAfterMs + 20)
    t.equal(await limiter.take(rates([b])), undefined, 'after the wait it said, one more passes')
    t.ok(await limiter.take(rates([b])), 'and only one')
  })

  t.test(`${name} limiter: another worker or host shares the counters`, async (t) => {
    const { limiter, other } = await make(t)
    const b = bucket(4, 60_000)
    const mixed = [await limiter.take(rates([b])), await other.take(rates([b])), await limiter.take(rates([b])), await other.take(rates([b]))]
    t.same(mixed, [undefined, undefined, undefined, undefined])
    t.equal((await other.take(rates([b])))?.bucket, 0, 'the fifth is refused wherever it lands')
    t.equal((await limiter.take(rates([b])))?.bucket, 0)
  })

  t.test(`${name} limiter: a refused transport part charges nothing; a refused tool part charges the transport`, async (t) => {
    const { limiter } = await make(t)
    const transport = bucket(2, 60_000)
    const tool = bucket(1, 60_000)
    t.equal(await limiter.take(rates([transport, tool], 1)), undefined, 'both pass')
    t.match(await limiter.take(rates([transport, tool], 1)), { bucket: 1, retryAfterMs: Number }, 'the tool part refuses')
    t.equal((await limiter.take(rates([transport])))?.bucket, 0, 'the refused tool call was charged to the transport (2 of 2)')
    const fresh = bucket(1, 60_000)
    t.equal((await limiter.take(rates([transport, fresh], 1)))?.bucket, 0, 'the transport refuses')
    t.equal(await limiter.take(rates([fresh])), undefined, 'the tool bucket behind it was not charged')
  })

  t.test(`${name} limiter: sessions per key, ended sessions stop counting`, async (t) => {
    const { limiter, other, store } = await make(t)
    const key = `quota-${++keys}-${Date.now()}`
    const ids = ['s1', 's2', 's3'].map((id) => `${id}-${key}`)
    for (const id of ids) await store.create(sessionRecord(id), 60_000)
    t.equal(await limiter.admit(key, ids[0]!, 2), true)
    t.equal(await other.admit(key, ids[1]!, 2), true)
    t.equal(await limiter.admit(key, ids[2]!, 2), false, 'a third is refused, wherever it asks')
    t.equal(await other.admit(key, ids[2]!, 2), false)
    t.equal(await limiter.admit(`${key}-else`, ids[2]!, 2), true, 'another key has its own count')
    await store.delete(ids[0]!)
    t.equal(await other.admit(key, ids[2]!, 2), true, 'once one ended, the third is admitted')
  })

  t.test(`${name} limiter: a full route's fair share names the heaviest client's idle sessions, least recently used first`, async (t) => {
    const { limiter, other, store } = await make(t)
    const route = `/fair-${++keys}-${Date.now()}|`
    const ttl = 60_000
    const made = async (client: string, n: number): Promise<string[]> => {
      const ids: string[] = []
      for (let i = 0; i < n; i++) {
        const id = `${client}-${i}-${route}`
        await store.create(sessionRecord(id), ttl)
        t.equal(await limiter.admit(`${route}${client}`, id, 10), true)
        ids.push(id)
        await sleep(50) // beyond the spread of PTTL answers from several Redis Cluster nodes
      }
      return ids
    }
    const heavy = await made('heavy', 6)
    await made('light', 3)
    // An idle TTL beyond the sessions' own stands for time gone by: each looks unused for that long.
    const aged = ttl + RECLAIM_IDLE_MS + 1000
    t.same(await other.reclaim(route, `${route}fresh`, 10, ttl), [], 'sessions used just now are not offered')
    const offered = await other.reclaim(route, `${route}fresh`, 10, aged)
    t.same(offered, heavy, "the heaviest client's, least recently used first (a fresh client's share of 10 among 3 is 4)")
    // Who is offered is the point here; the order is checked above (on Redis Cluster, PTTLs read from
    // several nodes have been seen out of order by more than 50 ms: see the commit).
    t.same((await limiter.reclaim(route, `${route}light`, 10, aged)).sort(), [...heavy].sort(), 'a client under its share (3 of 5) is offered them too')
    t.same(await limiter.reclaim(route, `${route}heavy`, 10, aged), [], 'the heaviest client itself is not')
    await store.delete(heavy[0]!)
    await store.delete(heavy[1]!)
    t.same(await limiter.reclaim(route, `${route}light`, 10, aged), [], 'one fewer than the heaviest (3 and 4 live): none')
    t.same(await limiter.reclaim(route, `${route}fresh`, 10, aged), heavy.slice(2), 'ended sessions are not offered')
    t.same(await limiter.reclaim(`${route}x|`, `${route}x|fresh`, 10, aged), [], "another route's clients are not offered")
  })
}
