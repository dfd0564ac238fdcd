/** Builds the limiter that matches the store: counters live where sessions live. */
import type { StoreConfig } from '../config/types.ts'
import { primaryPeer, type IpcPeer } from './cluster-protocol.ts'
import { ClusterLimiter } from './limiter-cluster.ts'
import { expiresInOf, MemoryLimiter } from './limiter-memory.ts'
import { MemoryStore } from './memory.ts'
import { RedisLimiter } from './limiter-redis.ts'
import { redisConnection } from './redis-connection.ts'
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
      return new MemoryLimiter({ alive: (id) => store.peek(id) !== undefined, expiresIn: store instanceof MemoryStore ? expiresInOf(store) : undefined })
    }
    case 'cluster':
      return new ClusterLimiter(primaryPeer(options.primary))
    case 'redis':
      return new RedisLimiter({ ...redisConnection(config, config.connect_timeout, config.command_timeout, options.env), keyPrefix: config.key_prefix })
  }
}
