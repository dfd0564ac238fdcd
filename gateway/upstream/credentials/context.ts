/**
 * What the credential providers of one gateway share: the cache (made on first use, so a gateway
 * without upstream credentials opens no connection for it), the logger, and per-kind extensions (the
 * identity-assertion signer, per-user OAuth's state). One per gateway build; a reload makes a new one
 * and closes the old.
 */
import type { Logger } from 'pino'
import type { StoreConfig, TokenEncryptionConfig, UpstreamIdentityConfig } from '../../config/types.ts'
import { EdgeError } from '../../wire/errors.ts'
import { createCredentialCache, MemoryCredentialCache, type CredentialCache } from './credential-cache.ts'
import { loadSealingKeys, SealedCache } from './sealed-cache.ts'

export interface CredentialSettings {
  /** Where sessions are: Redis shares tokens between hosts, anything else keeps them in this process. */
  store?: StoreConfig
  token_encryption?: TokenEncryptionConfig
  upstream_identity?: UpstreamIdentityConfig
}

export class CredentialContext {
  readonly logger: Logger
  readonly settings: CredentialSettings
  #cache: CredentialCache | undefined
  /** Per-kind state shared by the routes of one gateway (the signer, per-user OAuth), by name. */
  readonly extensions = new Map<string, unknown>()
  readonly #closers: Array<() => unknown> = []

  constructor(logger: Logger, settings: CredentialSettings = {}) {
    this.logger = logger
    this.settings = settings
  }

  /**
   * The shared cache: in Redis beside a Redis session store, its values sealed with `token_encryption`
   * (required there: no token sits readable in the store); else this process's memory. Throws
   * MCP_EDGE_CONFIG_INVALID for a Redis store without keys, so the gateway refuses to start.
   */
  get cache(): CredentialCache {
    if (this.#cache !== undefined) return this.#cache
    const { store, token_encryption: encryption } = this.settings
    if (store?.type === 'redis') {
      if (encryption === undefined) {
        throw new EdgeError('MCP_EDGE_CONFIG_INVALID', 'upstream tokens are kept in Redis, shared by every host: set token_encryption.keys so they are encrypted at rest')
      }
      const keys = loadSealingKeys(encryption)
      this.#cache = new SealedCache(createCredentialCache(store), keys)
    } else {
      const memory = new MemoryCredentialCache()
      this.#cache = encryption === undefined ? memory : new SealedCache(memory, loadSealingKeys(encryption))
    }
    return this.#cache
  }

  /** Runs `close` when the context closes (an extension's timers and connections). */
  onClose(close: () => unknown): void {
    this.#closers.push(close)
  }

  async close(): Promise<void> {
    for (const close of this.#closers) await Promise.resolve(close()).catch(() => undefined)
    await this.#cache?.close()
  }
}
