/**
 * The limiter in Redis, shared by every host: each check is one script (atomic, one round trip) that
 * runs GCRA on the request's buckets. Times come from the Redis server (TIME), so
 * hosts with skewed clocks agree. Keys (P is the store's `key_prefix`; T the hash tag `{P l}`):
 *
 *   P l:r:T<bucket>  string, the bucket's TAT in µs; expires when the TAT passes
 *   P l:s:T<key>     sorted set of the sessions counted under a quota key, scored by admission time;
 *                    members whose session record (`P s:{id}`, the store's) is gone stop counting
 *   P l:i:T<route>|  set of a route's quota keys that count sessions (for a full route's fair share)
 *
 * Every limiter key carries one hash tag, so a check that touches several buckets is one
 * script on Redis Cluster too (the limiter's keys then live on one shard). The admission script never
 * reads session keys (another slot): at its quota it returns the members, this side asks which still
 * exist, drops the others and tries once more.
 */
import { connectRedis, defineScripts, type RedisConnectionOptions } from './redis-connection.ts'
import { ADMIT_TTL_MS, fairShare, RECLAIM_CANDIDATES, RECLAIM_IDLE_MS, type LimitRequest, type Limiter, type Verdict } from './limiter.ts'
import { StoreUnavailableError } from './store.ts'

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])`

/**
 * KEYS: the buckets. ARGV: toolStart, the number of buckets, then interval and window (µs) per
 * bucket. Returns 0, or {bucket index (0-based), retry after (ms)}.
 */
const TAKE = `${NOW}
local toolStart = tonumber(ARGV[1])
local buckets = tonumber(ARGV[2])
local function part(from, to)
  local tats = {}
  for i = from, to do
    local interval = tonumber(ARGV[1 + 2 * i])
    local window = tonumber(ARGV[2 + 2 * i])
    local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
    if tat < now then tat = now end
    local arrival = tat + interval
    if arrival - window > now then return {i - 1, math.ceil((arrival - window - now) / 1000)} end
    tats[i] = arrival
  end
  for i = from, to do
    redis.call('SET', KEYS[i], string.format('%.0f', tats[i]), 'PX', math.ceil((tats[i] - now) / 1000))
  end
  return nil
end
return part(1, toolStart) or part(toolStart + 1, buckets) or 0`

/**
 * KEYS[1]: the quota key's set; KEYS[2]: its route's index of quota keys. ARGV: session id, max, ttl
 * (ms), then ids of sessions that ended. Drops the ended, then counts the session unless `max` are
 * counted: 1, or the members counted.
 */
const ADMIT = `${NOW}
now = math.floor(now / 1000)
for i = 4, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return redis.call('ZRANGE', KEYS[1], 0, -1) end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], KEYS[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1`

/**
 * KEYS[1]: a route's index of quota keys; KEYS[2]: the asking client's key (the index's keys share
 * its hash tag, so one slot). Forgets keys that count nothing; returns the asking key's count, the
 * heaviest other key with its count, and how many other keys count sessions (counts include sessions
 * that ended but are not yet dropped).
 */
const HEAVIEST = `local heaviest, most, others = '', 0, 0
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local n = redis.call('ZCARD', key)
  if n == 0 then redis.call('SREM', KEYS[1], key)
  elseif key ~= KEYS[2] then
    others = others + 1
    if n > most then heaviest, most = key, n end
  end
end
return {redis.call('ZCARD', KEYS[2]), heaviest, most, others}`

interface LimiterCommands {
  mcpEdgeLimitTake(...args: Array<string | number>): Promise<0 | [number, number]>
  mcpEdgeLimitAdmit(...args: Array<string | number>): Promise<1 | string[]>
  mcpEdgeLimitHeaviest(index: string, own: string): Promise<[number, string, number, number]>
  exists(key: string): Promise<number>
  pttl(key: string): Promise<number>
  zrange(key: string, start: number, stop: number): Promise<string[]>
  zrem(key: string, ...members: string[]): Promise<number>
  quit(): Promise<unknown>
  disconnect(): void
}

export interface RedisLimiterOptions extends RedisConnectionOptions {
  /** The store's key prefix: the limiter's keys go under `<prefix>l:`, and session records are `<prefix>s:<id>`. */
  keyPrefix: string
}

export class RedisLimiter implements Limiter {
  readonly #redis: LimiterCommands
  readonly #prefix: string
  readonly #tag: string
  readonly #connected: Promise<void>

  constructor(options: RedisLimiterOptions) {
    const redis = connectRedis(options, 'commands')
    redis.on('error', () => undefined) // the store reports outages; a check while Redis is away fails with 503
    // A cluster client answers nothing before it has read the cluster's slots: a check then is a 503.
    this.#connected = new Promise((resolve) => redis.once('ready', () => resolve()))
    this.#redis = defineScripts<LimiterCommands>(redis, {
      mcpEdgeLimitTake: { lua: TAKE },
      mcpEdgeLimitAdmit: { numberOfKeys: 2, lua: ADMIT },
      mcpEdgeLimitHeaviest: { numberOfKeys: 2, lua: HEAVIEST },
    })
    this.#prefix = options.keyPrefix
    this.#tag = `{${options.keyPrefix}l}`
  }

  async take(request: LimitRequest): Promise<Verdict> {
    const { buckets, toolStart } = request
    const keys: string[] = []
    const args: Array<string | number> = [toolStart, buckets.length]
    for (const bucket of buckets) {
      keys.push(this.#key('r', bucket.key))
      args.push(Math.round(bucket.intervalMs * 1000), Math.round(bucket.windowMs * 1000))
    }
    const reply = await this.#run(() => this.#redis.mcpEdgeLimitTake(keys.length, ...keys, ...args))
    return reply === 0 ? undefined : { bucket: Number(reply[0]), retryAfterMs: Number(reply[1]) }
  }

  async admit(key: string, sessionId: string, max: number): Promise<boolean> {
    const set = this.#key('s', key)
    const index = this.#key('i', routeOf(key))
    const first = await this.#run(() => this.#redis.mcpEdgeLimitAdmit(set, index, sessionId, max, ADMIT_TTL_MS))
    if (!Array.isArray(first)) return true
    // At the quota: the sessions counted may have ended (DELETE, idle expiry). Ask the store's keys.
    const alive = await this.#run(() => Promise.all(first.map((id) => this.#redis.exists(`${this.#prefix}s:{${id}}`))))
    const ended = first.filter((_id, index) => alive[index] === 0)
    if (ended.length === 0) return false
    const second = await this.#run(() => this.#redis.mcpEdgeLimitAdmit(set, index, sessionId, max, ADMIT_TTL_MS, ...ended))
    return !Array.isArray(second)
  }

  async reclaim(prefix: string, key: string, capacity: number, idleTtlMs: number): Promise<string[]> {
    const own = this.#key('s', key)
    const [counted, heaviest, most, others] = await this.#run(() => this.#redis.mcpEdgeLimitHeaviest(this.#key('i', prefix), own))
    if (heaviest === '' || most <= 1) return []
    // The counts may include ended sessions: count the live ones of both sides, oldest use first.
    const held = counted === 0 ? 0 : (await this.#live(own)).length
    if (held >= fairShare(capacity, others + 1)) return []
    const theirs = await this.#live(heaviest)
    if (theirs.length <= held + 1) return []
    // Time left is the idle TTL less the time since the last touch: unused long enough means little left.
    const idle = theirs.filter(([, left]) => left !== -1 && idleTtlMs - left >= RECLAIM_IDLE_MS)
    return idle.sort((a, b) => a[1] - b[1]).slice(0, RECLAIM_CANDIDATES).map(([id]) => id)
  }

  /** Resolves once the connection was first ready (a check made before it is refused with 503, as in an outage). */
  connected(): Promise<void> {
    return this.#connected
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => undefined)
    this.#redis.disconnect()
  }

  /** The live sessions of a quota key's set with their time left (less: used longer ago); drops the ended. */
  async #live(set: string): Promise<Array<[string, number]>> {
    const ids = await this.#run(() => this.#redis.zrange(set, 0, -1))
    const left = await this.#run(() => Promise.all(ids.map((id) => this.#redis.pttl(`${this.#prefix}s:{${id}}`))))
    const live: Array<[string, number]> = []
    const ended: string[] = []
    ids.forEach((id, i) => (left[i]! < 0 && left[i] !== -1 ? ended.push(id) : live.push([id, left[i]!])))
    if (ended.length > 0) await this.#run(() => this.#redis.zrem(set, ...ended))
    return live
  }

  #key(kind: 'r' | 's' | 'i', name: string): string {
    return `${this.#prefix}l:${kind}:${this.#tag}${name}`
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command()
    } catch (error) {
      throw new StoreUnavailableError(`redis: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    }
  }
}

/** The route part of a quota key (`<location>|<client>`; a location, from the config, has no `|`; a principal may), as `reclaim`'s prefix names it. */
function routeOf(key: string): string {
  return key.slice(0, key.indexOf('|') + 1)
}
