// The limiter contract against its three backends: memory (one process), cluster (the test process
// plays two workers talking over real IPC channels to a forked primary) and Redis (two hosts: two
// limiters on one real redis-server).
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { ClusterStore } from '../../gateway/store/cluster-client.ts'
import { ClusterLimiter } from '../../gateway/store/limiter-cluster.ts'
import { expiresInOf, MemoryLimiter } from '../../gateway/store/limiter-memory.ts'
import { RedisLimiter } from '../../gateway/store/limiter-redis.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { RedisStore } from '../../gateway/store/redis.ts'
import { limiterContract } from './limiter-contract.ts'
import { reapOnExit } from './reaper.ts'
import { startRedis } from './redis-server.ts'

t.setTimeout(120_000)
const primaryFile = fileURLToPath(new URL('./fixtures/cluster-primary.ts', import.meta.url))

limiterContract(t, 'memory', async (t) => {
  const store = new MemoryStore({ eventCapacity: 16, cacheTtl: 60 })
  const limiter = new MemoryLimiter({ alive: (id) => store.peek(id) !== undefined, expiresIn: expiresInOf(store) })
  t.teardown(async () => {
    await limiter.close()
    await store.close()
  })
  return { limiter, other: limiter, store }
})

/** A primary shared by the cluster subtests; two children stand for nothing more than one. */
let primary: ChildProcess | undefined
async function clusterPrimary(): Promise<ChildProcess> {
  if (primary !== undefined) return primary
  const child = fork(primaryFile, ['16', '60'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  reapOnExit(child)
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  await once(child, 'message')
  return (primary = child)
}

limiterContract(t, 'cluster', async (t: Test) => {
  const child = await clusterPrimary()
  // Two workers' limiters on one channel: the primary answers each call on the channel it came from.
  const limiter = new ClusterLimiter(child)
  const other = new ClusterLimiter(child)
  const store = new ClusterStore(child)
  t.teardown(async () => {
    await limiter.close()
    await other.close()
    await store.close()
  })
  return { limiter, other, store }
})

const redis = await startRedis(t)
limiterContract(t, 'redis', async (t) => {
  const options = { url: redis.url, keyPrefix: 'limits:', connectTimeoutMs: 2000, commandTimeoutMs: 2000 }
  const limiter = new RedisLimiter(options)
  const other = new RedisLimiter(options)
  const store = new RedisStore({ url: redis.url, keyPrefix: 'limits:', eventCapacity: 16, cacheTtl: 60, connectTimeout: 2, commandTimeout: 2 })
  await Promise.all([store.connected(), limiter.connected(), other.connected()])
  t.teardown(async () => {
    await Promise.all([limiter.close(), other.close(), store.close()])
  })
  return { limiter, other, store }
})
