// Every session store backend, made the same way for tests that run one scenario over each of them
// (the transport × store matrix): the in-process memory store, the cluster store talking to a forked
// primary over real IPC, and the Redis store on a real redis-server. Each closes at teardown.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { ClusterStore } from '../../gateway/store/cluster-client.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { RedisStore } from '../../gateway/store/redis.ts'
import type { SessionStore } from '../../gateway/store/store.ts'
import { reapOnExit } from './reaper.ts'
import { startRedis } from './redis-server.ts'

const primaryFile = fileURLToPath(new URL('./fixtures/cluster-primary.ts', import.meta.url))

export interface StoreBackend {
  readonly name: 'memory' | 'cluster' | 'redis'
  /** A fresh, empty store of this backend; it (and whatever serves it) is closed at teardown. */
  open(t: Test): Promise<SessionStore>
}

let prefixes = 0

export const storeBackends: readonly StoreBackend[] = [
  {
    name: 'memory',
    async open(t) {
      const store = new MemoryStore({ eventCapacity: 1024, cacheTtl: 90 })
      t.teardown(() => store.close())
      return store
    },
  },
  {
    name: 'cluster',
    async open(t) {
      const child = fork(primaryFile, ['1024', '90'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      reapOnExit(child)
      t.teardown(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      })
      await once(child, 'message')
      const store = new ClusterStore(child)
      t.teardown(async () => {
        await store.close()
        child.disconnect()
      })
      return store
    },
  },
  {
    name: 'redis',
    async open(t) {
      const redis = await startRedis(t)
      const store = new RedisStore({ url: redis.url, keyPrefix: `matrix${++prefixes}:`, eventCapacity: 1024, cacheTtl: 90, connectTimeout: 2, commandTimeout: 2 })
      t.teardown(() => store.close())
      await store.connected()
      return store
    },
  },
]
