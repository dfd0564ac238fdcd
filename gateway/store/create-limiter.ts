/** Builds the limiter that matches the store: counters live where sessions live. */
import cluster from 'node:cluster'
import type { StoreConfig } from '../config/types.ts'
import type { IpcPeer } from './cluster-protocol.ts'
import { ClusterLimiter } from './limiter-cluster.ts'
import { MemoryLimiter } from './limiter-memory.ts'
import { RedisLimiter } from './limiter-redis.ts'
import type { Limiter } from './limiter.ts'
import type { SessionStore } from './store.ts'

export interface CreateLimiterOptions {
  /** The session store the limiter sits beside (the memory limiter asks it whether a session lives). */
  store: SessionStore
  /** The channel to the cluster primary (default: `process`, in a node:cluster worker). */
  primary?: IpcPeer
  env?: NodeJS.ProcessEnv
}

export function createLimiter(config: StoreConfig, options: CreateLimiterOptions): Limiter {
  switch (config.type) {
    case 'memory': {
      const store = options.store
      return new MemoryLimiter({ alive: (id) => store.peek(id) !== undefined })
    }
    case 'cluster': {
      const primary = options.primary ?? (cluster.isWorker ? (process as unknown as IpcPeer) : undefined)
      if (primary === undefined) throw new Error('store type cluster lives in the cluster primary: start the gateway with `mcp-edge start`')
      return new ClusterLimiter(primary)
    }
    case 'redis':
      return new RedisLimiter({
        url: config.url,
        sentinels: config.sentinels,
        name: config.name,
        db: config.db,
        cluster: config.cluster,
        keyPrefix: config.key_prefix,
        connectTimeoutMs: config.connect_timeout * 1000,
        commandTimeoutMs: config.command_timeout * 1000,
        env: options.env,
      })
  }
}
