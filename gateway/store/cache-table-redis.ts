/**
 * The cache table in Redis, for several hosts. Every key shares the hash tag `{c}`, so one script
 * keeps the bounds exact (route bytes, total bytes, entries per principal) and it runs on Redis
 * Cluster too, where the whole cache lives on one shard: it is small by its bounds. Keys (P is the
 * store's `key_prefix`):
 *
 *   P{c}e:<key>        the value, expiring with the entry
 *   P{c}m              hash  key → JSON {b: bytes, r: route, g: group, p: principal}
 *   P{c}o              zset  key by write order (the oldest of all)
 *   P{c}x              zset  key by expiry time (the sweep)
 *   P{c}ro:<route>     zset  the route's keys by write order
 *   P{c}po:<principal> zset  the principal's keys by write order
 *   P{c}gk:<group>     set   the group's keys
 *   P{c}b              hash  route → bytes, and "" → bytes of all
 *   P{c}pc             hash  principal → entries
 *   P{c}g              hash  group → generation
 *   P{c}n              the write counter
 *
 * Times come from the Redis server (TIME), so hosts with skewed clocks agree on expiry.
 */
import { defineScripts, type RedisClient } from './redis-connection.ts'
import type { CacheBounds, CacheRead, CacheTable, CacheWrite } from './cache-table.ts'

/** Removes one entry and everything that counts it; shared by every script. */
const REMOVE = `local function remove(p, key)
  local raw = redis.call('HGET', p .. 'm', key)
  if not raw then
    redis.call('ZREM', p .. 'o', key)
    redis.call('ZREM', p .. 'x', key)
    return
  end
  local meta = cjson.decode(raw)
  redis.call('DEL', p .. 'e:' .. key)
  redis.call('HDEL', p .. 'm', key)
  redis.call('ZREM', p .. 'o', key)
  redis.call('ZREM', p .. 'x', key)
  redis.call('ZREM', p .. 'ro:' .. meta.r, key)
  redis.call('SREM', p .. 'gk:' .. meta.g, key)
  redis.call('HINCRBY', p .. 'b', meta.r, -meta.b)
  redis.call('HINCRBY', p .. 'b', '', -meta.b)
  if meta.p ~= '' then
    redis.call('ZREM', p .. 'po:' .. meta.p, key)
    redis.call('HINCRBY', p .. 'pc', meta.p, -1)
  end
end
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function oldest(zset)
  local first = redis.call('ZRANGE', zset, 0, 0)
  return first[1]
end
`

/** ARGV: prefix, key, value, ttlMs, route, group, principal ('' none), generation, routeBytes, totalBytes, principalEntries. */
const WRITE = `${REMOVE}
local p = ARGV[1]
local key, value, ttl, route, group, principal = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6], ARGV[7]
local routeMax, totalMax, principalMax = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local t = now()
for _, expired in ipairs(redis.call('ZRANGEBYSCORE', p .. 'x', '-inf', t, 'LIMIT', 0, 64)) do remove(p, expired) end
if tonumber(redis.call('HGET', p .. 'g', group) or '0') ~= tonumber(ARGV[8]) then return 0 end
local bytes = string.len(key) + string.len(value)
if bytes > routeMax or bytes > totalMax or principalMax < 1 then return 0 end
remove(p, key)
while tonumber(redis.call('HGET', p .. 'b', route) or '0') + bytes > routeMax do
  local first = oldest(p .. 'ro:' .. route)
  if not first then break end
  remove(p, first)
end
while tonumber(redis.call('HGET', p .. 'b', '') or '0') + bytes > totalMax do
  local first = oldest(p .. 'o')
  if not first then break end
  remove(p, first)
end
if principal ~= '' then
  while tonumber(redis.call('HGET', p .. 'pc', principal) or '0') >= principalMax do
    local first = oldest(p .. 'po:' .. principal)
    if not first then break end
    remove(p, first)
  end
end
local seq = redis.call('INCR', p .. 'n')
redis.call('SET', p .. 'e:' .. key, value, 'PX', ttl)
redis.call('HSET', p .. 'm', key, cjson.encode({b = bytes, r = route, g = group, p = principal}))
redis.call('ZADD', p .. 'o', seq, key)
redis.call('ZADD', p .. 'x', t + ttl, key)
redis.call('ZADD', p .. 'ro:' .. route, seq, key)
redis.call('SADD', p .. 'gk:' .. group, key)
redis.call('HINCRBY', p .. 'b', route, bytes)
redis.call('HINCRBY', p .. 'b', '', bytes)
if principal ~= '' then
  redis.call('ZADD', p .. 'po:' .. principal, seq, key)
  redis.call('HINCRBY', p .. 'pc', principal, 1)
end
return 1`

/** ARGV: prefix, key count, keys..., groups... → values..., generations... (false for a value absent). */
const READ = `local p = ARGV[1]
local n = tonumber(ARGV[2])
local out = {}
for i = 1, n do out[i] = redis.call('GET', p .. 'e:' .. ARGV[2 + i]) end
for i = 3 + n, #ARGV do out[#out + 1] = redis.call('HGET', p .. 'g', ARGV[i]) or '0' end
return out`

/** ARGV: prefix, group. */
const DROP = `${REMOVE}
local p = ARGV[1]
for _, key in ipairs(redis.call('SMEMBERS', p .. 'gk:' .. ARGV[2])) do remove(p, key) end
redis.call('DEL', p .. 'gk:' .. ARGV[2])
return redis.call('HINCRBY', p .. 'g', ARGV[2], 1)`

/** ARGV: prefix, route. */
const USAGE = `local p = ARGV[1]
return {tonumber(redis.call('HGET', p .. 'b', ARGV[2]) or '0'), tonumber(redis.call('HGET', p .. 'b', '') or '0'), redis.call('HLEN', p .. 'm')}`

/** Each script names one key, the counter: Redis Cluster routes it to the cache's shard (all share the tag). */
interface CacheCommands {
  mcpEdgeCacheWrite(slot: string, ...args: Array<string | number>): Promise<number>
  mcpEdgeCacheRead(slot: string, ...args: Array<string | number>): Promise<Array<string | null>>
  mcpEdgeCacheDrop(slot: string, prefix: string, group: string): Promise<number>
  mcpEdgeCacheUsage(slot: string, prefix: string, route: string): Promise<number[]>
}

export class RedisCacheTable implements CacheTable {
  readonly #commands: CacheCommands
  readonly #prefix: string
  readonly #slot: string
  readonly #run: <T>(command: () => Promise<T>) => Promise<T>

  /** `run` turns a failure to reach Redis into the store's StoreUnavailableError. */
  constructor(redis: RedisClient, prefix: string, run: <T>(command: () => Promise<T>) => Promise<T>) {
    // Every key the scripts touch has the tag {c}: one slot (see the top of the file).
    this.#prefix = `${prefix}{c}`
    this.#slot = `${this.#prefix}n`
    this.#run = run
    this.#commands = defineScripts<CacheCommands>(redis, {
      mcpEdgeCacheWrite: { numberOfKeys: 1, lua: WRITE },
      mcpEdgeCacheRead: { numberOfKeys: 1, lua: READ },
      mcpEdgeCacheDrop: { numberOfKeys: 1, lua: DROP },
      mcpEdgeCacheUsage: { numberOfKeys: 1, lua: USAGE },
    })
  }

  async read(keys: readonly string[], groups: readonly string[]): Promise<CacheRead> {
    const raw = await this.#run(() => this.#commands.mcpEdgeCacheRead(this.#slot, this.#prefix, keys.length, ...keys, ...groups))
    return {
      values: raw.slice(0, keys.length).map((value) => (typeof value === 'string' ? value : undefined)),
      generations: raw.slice(keys.length).map(Number),
    }
  }

  async write(entry: CacheWrite, generation: number, bounds: CacheBounds): Promise<boolean> {
    const ttl = Math.max(1, Math.round(entry.ttlMs))
    const kept = await this.#run(() => this.#commands.mcpEdgeCacheWrite(
      this.#slot, this.#prefix, entry.key, entry.value, ttl, entry.route, entry.group, entry.principal ?? '', generation,
      bounds.routeBytes, bounds.totalBytes, bounds.principalEntries,
    ))
    return Number(kept) === 1
  }

  async drop(group: string): Promise<void> {
    await this.#run(() => this.#commands.mcpEdgeCacheDrop(this.#slot, this.#prefix, group))
  }

  async usage(route: string): Promise<{ route: number; total: number; entries: number }> {
    const [routeBytes, total, entries] = await this.#run(() => this.#commands.mcpEdgeCacheUsage(this.#slot, this.#prefix, route))
    return { route: Number(routeBytes), total: Number(total), entries: Number(entries) }
  }
}
