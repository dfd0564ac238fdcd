/**
 * The task table in Redis, for several hosts. Keys (P is the store's `key_prefix`):
 *
 *   P t:{<key>}    string "<version>\n<data>", expiring with the entry
 *   P to:<owner>   sorted set of an owner's keys, scored by their expiry time (ms)
 *
 * A write is one script on the entry's key (compare-and-set on the version), then, for an owned entry,
 * one on the owner's index: never both keys in one script, so it runs on Redis Cluster too. Times
 * come from the Redis server (TIME), so hosts with skewed clocks agree on expiry.
 */
import { defineScripts, type RedisClient } from './redis-connection.ts'
import type { TaskEntry, TaskTable } from './task-table.ts'

const WRITE = `local raw = redis.call('GET', KEYS[1])
local version = 0
if raw then version = tonumber(string.sub(raw, 1, string.find(raw, '\\n', 1, true) - 1)) end
if version ~= tonumber(ARGV[1]) then return 0 end
version = version + 1
redis.call('SET', KEYS[1], version .. '\\n' .. ARGV[2], 'PX', ARGV[3])
return version`

const INDEX = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`

const LIVE = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf', 'LIMIT', 0, tonumber(ARGV[1]))`

const COUNT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], now, '+inf')`

interface TaskCommands {
  mcpEdgeTaskWrite(key: string, expected: number, data: string, ttlMs: number): Promise<number>
  mcpEdgeTaskIndex(key: string, member: string, ttlMs: number): Promise<number>
  mcpEdgeTaskLive(key: string, max: number): Promise<string[]>
  mcpEdgeTaskCount(key: string): Promise<number>
}

export class RedisTaskTable implements TaskTable {
  readonly #redis: RedisClient
  readonly #commands: TaskCommands
  readonly #prefix: string
  readonly #run: <T>(command: () => Promise<T>) => Promise<T>

  /** `run` turns a failure to reach Redis into the store's StoreUnavailableError. */
  constructor(redis: RedisClient, prefix: string, run: <T>(command: () => Promise<T>) => Promise<T>) {
    this.#redis = redis
    this.#prefix = prefix
    this.#run = run
    this.#commands = defineScripts<TaskCommands>(redis, {
      mcpEdgeTaskWrite: { numberOfKeys: 1, lua: WRITE },
      mcpEdgeTaskIndex: { numberOfKeys: 1, lua: INDEX },
      mcpEdgeTaskLive: { numberOfKeys: 1, lua: LIVE },
      mcpEdgeTaskCount: { numberOfKeys: 1, lua: COUNT },
    })
  }

  async read(key: string): Promise<TaskEntry | undefined> {
    const raw = await this.#run(() => this.#redis.get(this.#entryKey(key)))
    return raw === null ? undefined : parse(raw)
  }

  async write(key: string, data: string, expected: number, ttlMs: number, owner?: string): Promise<number> {
    const ttl = Math.max(1, Math.round(ttlMs))
    const version = Number(await this.#run(() => this.#commands.mcpEdgeTaskWrite(this.#entryKey(key), expected, data, ttl)))
    if (version > 0 && owner !== undefined) await this.#run(() => this.#commands.mcpEdgeTaskIndex(this.#ownerKey(owner), key, ttl))
    return version
  }

  async list(owner: string, max: number): Promise<string[]> {
    const keys = await this.#run(() => this.#commands.mcpEdgeTaskLive(this.#ownerKey(owner), max))
    const raws = await Promise.all(keys.map((key) => this.#run(() => this.#redis.get(this.#entryKey(key)))))
    return raws.flatMap((raw) => (raw === null ? [] : [parse(raw).data]))
  }

  async count(owner: string): Promise<number> {
    return Number(await this.#run(() => this.#commands.mcpEdgeTaskCount(this.#ownerKey(owner))))
  }

  #entryKey(key: string): string {
    return `${this.#prefix}t:{${key}}`
  }

  #ownerKey(owner: string): string {
    return `${this.#prefix}to:${owner}`
  }
}

function parse(raw: string): TaskEntry {
  const newline = raw.indexOf('\n')
  return { version: Number(raw.slice(0, newline)), data: raw.slice(newline + 1) }
}
