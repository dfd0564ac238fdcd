/**
 * What the credential providers of one gateway share: the cache (made on first use, so a gateway
 * without upstream credentials opens no connection for it), the identity-assertion signer, the logger.
 * One per gateway build; a reload makes a new one and closes the old.
 */
import type { Logger } from 'pino'
import type { StoreConfig } from '../../config/types.ts'
import { createCredentialCache, MemoryCredentialCache, type CredentialCache } from './credential-cache.ts'

export class CredentialContext {
  readonly logger: Logger
  readonly #store: StoreConfig | undefined
  #cache: CredentialCache | undefined
  /** Extensions of other kinds (the identity signer, per-user OAuth), by name. */
  readonly extensions = new Map<string, unknown>()

  /** `store` undefined: this process's memory only (tests, the stdio gateway). */
  constructor(logger: Logger, store?: StoreConfig) {
    this.logger = logger
    this.#store = store
  }

  /** The shared cache: Redis beside a Redis session store, else this process's memory. */
  get cache(): CredentialCache {
    return (this.#cache ??= this.#store === undefined ? new MemoryCredentialCache() : createCredentialCache(this.#store))
  }

  async close(): Promise<void> {
    await this.#cache?.close()
  }
}
