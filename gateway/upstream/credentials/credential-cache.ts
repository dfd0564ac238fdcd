/**
 * Where upstream credentials are kept between exchanges, shared by every worker and host when the
 * session store is: tokens by key with a lifetime, and a short lock so that one process at a time asks
 * the authorization server for the same token (single flight across processes; within a process the
 * providers coalesce on a promise first). Values are opaque strings to the cache.
 *
 *   memory   one process (store type memory, or cluster: each worker keeps its own, see docs/upstream-credentials.md)
 *   redis    P c:<key> (value, PX ttl), P c:lock:<key> (SET NX PX): every worker of every host
 */
import { randomUUID } from 'node:crypto'
import type { StoreConfig } from '../../config/types.ts'
import { connectRedis, redisConnection, type RedisClient } from '../../store/redis-connection.ts'

export interface CredentialCache {
  /** The value kept under `key`, or undefined when none (or it expired). */
  get(key: string): Promise<string | undefined>
  /** Keeps `value` under `key` for `ttlMs`. */
  set(key: string, value: string, ttlMs: number): Promise<void>
  delete(key: string): Promise<void>
  /** Takes `key`'s lock for at most `ttlMs`: a release function, or undefined when another process holds it. */
  lock(key: string, ttlMs: number): Promise<(() => Promise<void>) | undefined>
  close(): Promise<void>
}

interface Kept {
  readonly value: string
  readonly until: number
}

/** Bound of the memory cache's entries (the oldest goes first when full). */
export const MEMORY_CACHE_ENTRIES = 100_000

/** One process's cache. */
export class MemoryCredentialCache implements CredentialCache {
  readonly #values = new Map<string, Kept>()
  readonly #locks = new Map<string, number>()

  async get(key: string): Promise<string | undefined> {
    const kept = this.#values.get(key)
    if (kept === undefined) return undefined
    if (kept.until > Date.now()) return kept.value
    this.#values.delete(key)
    return undefined
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#values.delete(key)
    if (this.#values.size >= MEMORY_CACHE_ENTRIES) this.#values.delete(this.#values.keys().next().value as string)
    this.#values.set(key, { value, until: Date.now() + ttlMs })
  }

  async delete(key: string): Promise<void> {
    this.#values.delete(key)
  }

  async lock(key: string, ttlMs: number): Promise<(() => Promise<void>) | undefined> {
    const held = this.#locks.get(key)
    if (held !== undefined && held > Date.now()) return undefined
    const until = Date.now() + ttlMs
    this.#locks.set(key, until)
    return async () => {
      if (this.#locks.get(key) === until) this.#locks.delete(key)
    }
  }

  async close(): Promise<void> {
    this.#values.clear()
    this.#locks.clear()
  }
}

/** Releases a lock only if it is still this holder's (its token), so a late release frees no one else's. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`

/** The cache in Redis, beside the session store (same server, same key prefix). */
export class RedisCredentialCache implements CredentialCache {
  readonly #redis: RedisClient
  readonly #prefix: string
  readonly #connectTimeoutMs: number

  constructor(redis: RedisClient, prefix: string, connectTimeoutMs: number) {
    this.#redis = redis
    this.#prefix = `${prefix}c:`
    this.#connectTimeoutMs = connectTimeoutMs
  }

  async get(key: string): Promise<string | undefined> {
    await this.#connected()
    return (await this.#redis.get(this.#prefix + key)) ?? undefined
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.#connected()
    await this.#redis.set(this.#prefix + key, value, 'PX', Math.max(1, Math.floor(ttlMs)))
  }

  async delete(key: string): Promise<void> {
    await this.#connected()
    await this.#redis.del(this.#prefix + key)
  }

  /**
   * The connection has no offline queue (a command while Redis is away fails at once); the first
   * commands, made while it is still connecting, wait for it (at most the connect timeout) instead.
   */
  async #connected(): Promise<void> {
    if (this.#redis.status === 'ready' || this.#redis.status === 'end') return
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.#redis.off('ready', done)
        resolve()
      }
      const timer = setTimeout(done, this.#connectTimeoutMs)
      this.#redis.once('ready', done)
    })
  }

  async lock(key: string, ttlMs: number): Promise<(() => Promise<void>) | undefined> {
    await this.#connected()
    const name = `${this.#prefix}lock:${key}`
    const token = randomUUID()
    const taken = await this.#redis.set(name, token, 'PX', Math.max(1, Math.floor(ttlMs)), 'NX')
    if (taken !== 'OK') return undefined
    return async () => {
      await this.#redis.eval(RELEASE, 1, name, token).catch(() => undefined)
    }
  }

  async close(): Promise<void> {
    this.#redis.disconnect()
  }
}

/** The cache that matches the store: Redis when sessions are in Redis, else this process's memory. */
export function createCredentialCache(config: StoreConfig, env?: NodeJS.ProcessEnv): CredentialCache {
  if (config.type !== 'redis') return new MemoryCredentialCache()
  const redis = connectRedis(redisConnection(config, config.connect_timeout, config.command_timeout, env), 'commands')
  return new RedisCredentialCache(redis, config.key_prefix, config.connect_timeout * 1000)
}
