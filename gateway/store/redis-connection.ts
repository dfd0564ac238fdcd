/**
 * Builds the ioredis connections of the Redis store. Secrets and TLS come from the environment, not
 * the config file: REDIS_PASSWORD, REDIS_USERNAME, REDIS_TLS=1 (or a rediss:// url), REDIS_TLS_CA_FILE.
 *
 * Every option serves one rule: a request that needs Redis while it is away fails fast (no offline
 * queue, no retries, a command timeout) and the connection comes back by itself (retryStrategy).
 */
import { readFileSync } from 'node:fs'
import { Redis, type RedisOptions } from 'ioredis'

export interface RedisConnectionOptions {
  url: string
  /** Milliseconds to wait for a TCP connection (and TLS handshake). */
  connectTimeoutMs: number
  /** Milliseconds a command may take before it fails. */
  commandTimeoutMs: number
  env?: NodeJS.ProcessEnv
}

/** Delay before the n-th reconnection attempt: 100 ms doubling, at most 2 s; never gives up. */
function reconnectDelay(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt, 5), 2000)
}

/** The ioredis options for `url` and the environment (exported for tests and `mcp-edge check`). */
export function redisOptions(options: RedisConnectionOptions, role: 'commands' | 'subscriber'): RedisOptions {
  const env = options.env ?? process.env
  const result: RedisOptions = {
    connectionName: `mcp-edge-${role}`,
    connectTimeout: options.connectTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResubscribe: false,
    retryStrategy: reconnectDelay,
  }
  if (role === 'commands') result.commandTimeout = options.commandTimeoutMs
  if (env.REDIS_PASSWORD) result.password = env.REDIS_PASSWORD
  if (env.REDIS_USERNAME) result.username = env.REDIS_USERNAME
  const tls = env.REDIS_TLS === '1' || env.REDIS_TLS === 'true'
  if (tls || env.REDIS_TLS_CA_FILE) {
    result.tls = env.REDIS_TLS_CA_FILE ? { ca: readFileSync(env.REDIS_TLS_CA_FILE) } : {}
  }
  return result
}

/** A connection to `options.url` that starts connecting at once. */
export function connectRedis(options: RedisConnectionOptions, role: 'commands' | 'subscriber'): Redis {
  return new Redis(options.url, redisOptions(options, role))
}
