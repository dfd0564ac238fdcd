/** Builds the store backend the config names. */
import type { StoreConfig } from '../config/types.ts'
import { MemoryStore } from './memory.ts'
import type { SessionStore } from './store.ts'

export function createStore(config: StoreConfig): SessionStore {
  switch (config.type) {
    case 'memory':
      return new MemoryStore({ eventCapacity: config.event_capacity, cacheTtl: config.cache_ttl })
  }
}
