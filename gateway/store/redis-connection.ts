/**
 * Builds the ioredis connections of the Redis store, for the three ways Redis is deployed:
 *
 *   url: redis://host:6379/0          one server (or a managed endpoint that hides its failover)
 *   sentinels: [host:26379, …], name  Sentinel: ioredis asks the sentinels for the master `name`,
 *                                     follows +switch-master, and reconnects to the new master
 *   cluster: [host:7000, …]           Redis Cluster: seed nodes; ioredis learns the slots and follows
 *                                     MOVED/ASK and failovers (every key of one session shares a slot)
 *
 * Secrets and TLS come from the environment, not the config file: REDIS_PASSWORD, REDIS_USERNAME,
 * REDIS_SENTINEL_PASSWORD, REDIS_TLS=1 (or a rediss:// url), REDIS_TLS_CA_FILE.
 *
 * Every option serves one rule: a request that needs Redis while it is away fails fast (no offline
 * queue, no retries, a command timeout) and the connection comes back by itself (retry strategies).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis'

// ioredis (about 60 modules, 0.07 CPU-s to load) is required at the first connection, not imported:
// a gateway on the memory or cluster store never loads it. A synchronous require keeps connectRedis
// synchronous for its callers; ioredis is CommonJS, so this is the instance an import would give.
const require = createRequire(import.meta.url)

/** A standalone or Sentinel-managed connection, or a Redis Cluster client: the store uses their common commands. */
export type RedisClient = Redis | Cluster

/** Where Redis is: exactly one of `url`, `sentinels` (with `name`) or `cluster`. */
export interface RedisEndpoint {
  url?: string
  /** Sentinel addresses as `host:port`. */
  sentinels?: string[]
  /** The master set name the sentinels monitor. */
  name?: string
  /** The database number under Sentinel (a `url` carries its own). */
  db?: number
  /** Seed nodes of a Redis Cluster as `host:port`. */
  cluster?: string[]
}

export interface RedisConnectionOptions extends RedisEndpoint {
  /** Milliseconds to wait for a TCP connection (and TLS handshake). */
  connectTimeoutMs: number
  /** Milliseconds a command may take before it fails. */
  commandTimeoutMs: number
  env?: NodeJS.ProcessEnv
}

/**
 * What connects to Redis, from anything that names an endpoint (a store config block, the store's
 * options): the endpoint's own keys and the timeouts given in seconds.
 */
export function redisConnection(endpoint: RedisEndpoint, connectTimeoutS: number, commandTimeoutS: number, env?: NodeJS.ProcessEnv): RedisConnectionOptions {
  const { url, sentinels, name, db, cluster } = endpoint
  return { url, sentinels, name, db, cluster, connectTimeoutMs: connectTimeoutS * 1000, commandTimeoutMs: commandTimeoutS * 1000, env }
}

/** Delay before the n-th reconnection attempt: 100 ms doubling, at most 2 s; never gives up. */
function reconnectDelay(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt, 5), 2000)
}

/** `host:port` (IPv6 in brackets) → what ioredis takes. */
export function parseHostPort(address: string, defaultPort: number): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(address.trim())
  if (match === null) throw new Error(`not a host:port address: ${address}`)
  return { host: match[1]!, port: match[2] === undefined ? defaultPort : Number(match[2]) }
}

/** Which topology the endpoint names, checked: the config schema allows one, code calling the store may not. */
export function topologyOf(endpoint: RedisEndpoint): 'standalone' | 'sentinel' | 'cluster' {
  const given = [endpoint.url, endpoint.sentinels, endpoint.cluster].filter((value) => value !== undefined).length
  if (given !== 1) throw new Error('the redis store needs exactly one of url, sentinels (with name) or cluster')
  if (endpoint.sentinels !== undefined && !endpoint.name) throw new Error('the redis store with sentinels needs the master set `name`')
  return endpoint.cluster !== undefined ? 'cluster' : endpoint.sentinels !== undefined ? 'sentinel' : 'standalone'
}

/** The ioredis options every connection shares (exported for tests and `mcp-edge check`). */
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

/** A connection (or cluster client) to the endpoint that starts connecting at once. */
export function connectRedis(options: RedisConnectionOptions, role: 'commands' | 'subscriber'): RedisClient {
  const common = redisOptions(options, role)
  const { Cluster, Redis } = require('ioredis') as typeof import('ioredis')
  switch (topologyOf(options)) {
    case 'standalone':
      return new Redis(options.url!, common)
    case 'sentinel': {
      const env = options.env ?? process.env
      return new Redis({
        ...common,
        sentinels: options.sentinels!.map((address) => parseHostPort(address, 26379)),
        name: options.name!,
        db: options.db ?? 0,
        ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
        sentinelRetryStrategy: reconnectDelay,
        // Hear +switch-master from the sentinels instead of waiting for the old master to fail.
        failoverDetector: true,
        // A demoted master answers writes with READONLY: reconnect, which asks the sentinels again.
        reconnectOnError: (error) => error.message.startsWith('READONLY'),
      })
    }
    case 'cluster': {
      const { retryStrategy: _retry, enableOfflineQueue: _queue, ...nodeOptions } = common
      const clusterOptions: ClusterOptions = {
        redisOptions: nodeOptions,
        enableOfflineQueue: false,
        clusterRetryStrategy: reconnectDelay,
        slotsRefreshTimeout: options.connectTimeoutMs,
        scaleReads: 'master',
        ...(nodeOptions.tls !== undefined ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
      }
      return new Cluster(options.cluster!.map((address) => parseHostPort(address, 6379)), clusterOptions)
    }
  }
}

/**
 * Defines `scripts` on `redis` (ioredis `defineCommand`, each by name) and returns the client typed as
 * the commands they add (a script's name must be one of them; they may include plain commands too).
 */
export function defineScripts<Commands>(redis: RedisClient, scripts: { readonly [Name in keyof Commands]?: { readonly numberOfKeys?: number; readonly lua: string } }): Commands {
  for (const [name, script] of Object.entries<{ numberOfKeys?: number; lua: string } | undefined>(scripts)) if (script !== undefined) redis.defineCommand(name, script)
  return redis as unknown as Commands
}
