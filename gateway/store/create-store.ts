/** Builds the store backend the config names. */
import type { Logger } from 'pino'
import type { ClusterStoreConfig, MemoryStoreConfig, StoreConfig } from '../config/types.ts'
import { ClusterStore } from './cluster-client.ts'
import { primaryPeer, type IpcPeer } from './cluster-protocol.ts'
import { MemoryStore, type MemoryStoreOptions } from './memory.ts'
import { RedisStore } from './redis.ts'
import type { SessionStore } from './store.ts'

export interface CreateStoreOptions {
  /** Where the Redis backend reports outages and recoveries. */
  logger?: Logger
  /** The channel to the cluster primary (default: `process`, in a node:cluster worker). */
  primary?: IpcPeer
  env?: NodeJS.ProcessEnv
}

export function createStore(config: StoreConfig, options: CreateStoreOptions = {}): SessionStore {
  switch (config.type) {
    case 'memory':
      return new MemoryStore(memoryStoreOptions(config))
    case 'cluster':
      return new ClusterStore(primaryPeer(options.primary))
    case 'redis': {
      const logger = options.logger
      return new RedisStore({
        url: config.url,
        sentinels: config.sentinels,
        name: config.name,
        db: config.db,
        cluster: config.cluster,
        keyPrefix: config.key_prefix,
        eventCapacity: config.event_capacity,
        cacheTtl: config.cache_ttl,
        eventBytes: config.event_bytes,
        connectTimeout: config.connect_timeout,
        commandTimeout: config.command_timeout,
        env: options.env,
        onStatus: (status, error) => {
          if (status === 'down') logger?.warn({ err: error }, 'redis unavailable: requests that need the session store get 503 until it is back')
          else logger?.info('redis reachable again')
        },
      })
    }
  }
}

/** The options of the memory store that holds the sessions: this process's (memory) or the cluster primary's. */
export function memoryStoreOptions(config: MemoryStoreConfig | ClusterStoreConfig): MemoryStoreOptions {
  return {
    eventCapacity: config.event_capacity,
    cacheTtl: config.cache_ttl,
    eventBytes: config.event_bytes,
    eventBytesTotal: config.event_bytes_total,
    sessionBytesTotal: config.session_bytes_total,
    sessionBytesPerPrincipal: config.session_bytes_per_principal,
  }
}
