/**
 * The Lua scripts of the Redis store: each store operation is one script, so it is atomic and costs
 * one round trip. Keys (P is the configured `key_prefix`):
 *
 *   P s:{<id>}   string, the session record, expires after the idle TTL (see redis-codec.ts):
 *                  [version, last event seq, idle TTL ms, route, initialized 0/1, level, [subscriptions], [hidden]]
 *                  "\n" then the JSON of what never changes (protocol version, client info, ...), opaque here
 *   P e:{<id>}   list, the event log: "<seq> <ms> <stream> <data>", capped at event_capacity,
 *                  expires cache_ttl after its last append
 *   P r:<route>  sorted set of the route's sessions, scored by their expiry time (ms)
 *   P i          channel of invalidations: "<version> <id>" (version -1: deleted)
 *   P b:<name>   channels of the bus
 *
 * A string, not a hash: a hash with a value over 64 bytes (the client's capabilities) leaves Redis's
 * compact encoding and costs twice the memory. Times come from the Redis server (TIME), so hosts with
 * skewed clocks agree. A script touches one session's keys only (the `{<id>}` hash tag puts them in
 * one Redis Cluster slot) or one route index, never both: the store updates the index in a second
 * step, so the same scripts run on one server, under Sentinel and on Redis Cluster.
 */

const LIB = `local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function extend(key, ttl)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
local function list(items)
  if #items == 0 then return '[]' end
  return cjson.encode(items)
end
-- The record's changing part as a table, and the untouched rest of the string (from its newline).
local function open(raw)
  local newline = string.find(raw, '\\n', 1, true)
  return cjson.decode(string.sub(raw, 1, newline - 1)), string.sub(raw, newline)
end
-- The upstream sessions (name -> JSON string), left out while there are none.
local function upstreams(u)
  if u == nil or u == cjson.null or next(u) == nil then return '' end
  return ',' .. cjson.encode(u)
end
local function seal(m, rest)
  local level = m[6] == cjson.null and 'null' or cjson.encode(m[6])
  return '[' .. m[1] .. ',' .. m[2] .. ',' .. m[3] .. ',' .. cjson.encode(m[4]) .. ',' .. m[5] .. ',' .. level
    .. ',' .. list(m[7]) .. ',' .. list(m[8]) .. upstreams(m[9]) .. ']' .. rest
end
`

/** KEYS: s, e. ARGV: idle TTL ms, record → 1, or 0 when the id exists. */
const create = `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('SET', KEYS[1], ARGV[2], 'PX', tonumber(ARGV[1]))
return 1`

/** KEYS: r. ARGV: id, idle TTL ms → the route's index holds the session until its expiry. */
const index = `${LIB}
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now() + ttl, ARGV[1])
extend(KEYS[1], ttl)
return 1`

/** KEYS: s. → {pttl, record} or nil. */
const get = `local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
return {redis.call('PTTL', KEYS[1]), raw}`

/**
 * KEYS: s. ARGV: change kind (i, l, +s, -s, +h, -h, u), value, invalidation channel, id, max (an
 * addition is skipped when the list holds that many already; -1: no bound) → {pttl, record} or nil.
 * The value of `u` is "<upstream>\n<session JSON>", an empty JSON forgetting the upstream.
 */
const update = `${LIB}
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local m, rest = open(raw)
local kind, value = ARGV[1], ARGV[2]
if kind == 'i' then
  m[5] = 1
elseif kind == 'l' then
  m[6] = value
elseif kind == 'u' then
  local newline = string.find(value, '\\n', 1, true)
  local name, session = string.sub(value, 1, newline - 1), string.sub(value, newline + 1)
  local u = m[9]
  if u == nil or u == cjson.null then u = {} end
  if session == '' then u[name] = nil else u[name] = session end
  m[9] = u
else
  local items = string.sub(kind, 2) == 's' and m[7] or m[8]
  local at = nil
  for n, item in ipairs(items) do
    if item == value then at = n break end
  end
  if string.sub(kind, 1, 1) == '+' then
    local max = tonumber(ARGV[5])
    if not at and (max < 0 or #items < max) then table.insert(items, value) end
  elseif at then
    table.remove(items, at)
  end
end
m[1] = m[1] + 1
local record = seal(m, rest)
redis.call('SET', KEYS[1], record, 'KEEPTTL')
redis.call('PUBLISH', ARGV[3], m[1] .. ' ' .. ARGV[4])
return {redis.call('PTTL', KEYS[1]), record}`

/** KEYS: s → {the TTL now granted (ms), route}, or nil when the session is gone. */
const touch = `${LIB}
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local m = open(raw)
redis.call('PEXPIRE', KEYS[1], m[3])
return {m[3], m[4]}`

/** KEYS: s, e. ARGV: invalidation channel, id → the session's route, or nil when there was no session. */
const remove = `${LIB}
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local m = open(raw)
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('PUBLISH', ARGV[1], '-1 ' .. ARGV[2])
return m[4]`

/** KEYS: r. ARGV: "ids" to list them → the count, or the ids, of live sessions. */
const members = `${LIB}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now())
if ARGV[1] == 'ids' then return redis.call('ZRANGE', KEYS[1], 0, -1) end
return redis.call('ZCARD', KEYS[1])`

/** KEYS: s, e. ARGV: stream, data, capacity, cache TTL ms → the event's sequence number, or 0 without a session. */
const append = `${LIB}
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local m, rest = open(raw)
m[2] = m[2] + 1
redis.call('SET', KEYS[1], seal(m, rest), 'KEEPTTL')
redis.call('RPUSH', KEYS[2], m[2] .. ' ' .. now() .. ' ' .. ARGV[1] .. ' ' .. ARGV[2])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return m[2]`

/** KEYS: s, e → {last sequence issued, now, entries} or nil without a session. */
const replay = `${LIB}
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local m = open(raw)
return {m[2], now(), redis.call('LRANGE', KEYS[2], 0, -1)}`

/**
 * KEYS: the channel (not a key: named so that Redis Cluster routes the script by it). ARGV: message.
 * A bus channel's messages are all published on one node, so its subscribers get them in publish
 * order; a plain PUBLISH from a cluster client goes to any node, and two nodes may deliver out of order.
 */
const publish = `return redis.call('PUBLISH', KEYS[1], ARGV[1])`

/** Every script with its number of keys, as ioredis `defineCommand` takes them. */
export const SCRIPTS = {
  mcpEdgeCreate: { numberOfKeys: 2, lua: create },
  mcpEdgeIndex: { numberOfKeys: 1, lua: index },
  mcpEdgePublish: { numberOfKeys: 1, lua: publish },
  mcpEdgeGet: { numberOfKeys: 1, lua: get },
  mcpEdgeUpdate: { numberOfKeys: 1, lua: update },
  mcpEdgeTouch: { numberOfKeys: 1, lua: touch },
  mcpEdgeDelete: { numberOfKeys: 2, lua: remove },
  mcpEdgeMembers: { numberOfKeys: 1, lua: members },
  mcpEdgeAppend: { numberOfKeys: 2, lua: append },
  mcpEdgeReplay: { numberOfKeys: 2, lua: replay },
} as const

export type ScriptName = keyof typeof SCRIPTS
