/**
 * The Lua scripts of the Redis store: each store operation is one script, so it is atomic and costs
 * one round trip. Keys (P is the configured `key_prefix`):
 *
 *   P s:{<id>}   string, the session record, expires after the idle TTL (see redis-codec.ts):
 *                  [version, last event seq, idle TTL ms, route, initialized 0/1, level, [subscriptions], [hidden](, upstreams(, catalogue version))]
 *                  "\n" then the JSON of what never changes (protocol version, client info, ...), opaque here
 *   P e:{<id>}   list, the event log: "<seq> <ms> <stream> <data>", capped at event_capacity and
 *                  event_bytes (its newest entry kept whatever its size), expires cache_ttl after its last append
 *   P n:{<id>}   string, the bytes the event log holds, with the log's TTL
 *   P d:{<id>}:<name>  string, a session's document (catalogue, state): "<version>\n<JSON>", with the
 *                  record's TTL (touch and delete carry both documents along)
 *   P c:<route>  string, a route's catalogue document: "<version>\n<JSON>", no expiry
 *   P r:<route>  sorted set of the route's sessions, scored by their expiry time (ms)
 *   P i          channel of invalidations: "<version> <id>" (version -1: deleted)
 *   P b:<name>   channels of the bus
 *
 * A string, not a hash: a hash with a value over 64 bytes (the client's capabilities) leaves Redis's
 * compact encoding and costs twice the memory. Times come from the Redis server (TIME), so hosts with
 * skewed clocks agree. A script touches one session's keys only (the `{<id>}` hash tag puts them in
 * one Redis Cluster slot) or one route index, never both: the store updates the index in a second
 * step, so the same scripts run on one server, under Sentinel and on Redis Cluster. The writes a
 * client is answered about (create, update, delete, append, a document) carry a deadline and do
 * nothing when they reach Redis after it (redis-deadline.ts).
 */

import { DEADLINE_GUARD } from './redis-deadline.ts'

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
-- The catalogue version (tenth item) needs the ninth before it, {} when there are no upstreams.
local function tail(m)
  local u = upstreams(m[9])
  if m[10] == nil or m[10] == cjson.null then return u end
  if u == '' then u = ',{}' end
  return u .. ',' .. m[10]
end
local function seal(m, rest)
  local level = m[6] == cjson.null and 'null' or cjson.encode(m[6])
  return '[' .. m[1] .. ',' .. m[2] .. ',' .. m[3] .. ',' .. cjson.encode(m[4]) .. ',' .. m[5] .. ',' .. level
    .. ',' .. list(m[7]) .. ',' .. list(m[8]) .. tail(m) .. ']' .. rest
end
`

/** KEYS: s, e, n. ARGV: idle TTL ms, record, deadline → 1, or 0 when the id exists. */
const create = `${DEADLINE_GUARD}if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3])
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
 * KEYS: s. ARGV: change kind (i, l, +s, -s, +h, -h, u, c), value, invalidation channel, id, max (an
 * addition is skipped when the list holds that many already; -1: no bound), deadline → {pttl, record} or nil.
 * The value of `u` is "<upstream>\n<session JSON>", an empty JSON forgetting the upstream.
 */
const update = `${LIB}${DEADLINE_GUARD}
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
elseif kind == 'c' then
  local was = m[10]
  if was == nil or was == cjson.null then was = 0 end
  m[10] = math.max(was, tonumber(value))
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

/** KEYS: s, then the session's documents → {the TTL now granted (ms), route}, or nil when the session is gone. */
const touch = `${LIB}
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local m = open(raw)
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], m[3]) end
return {m[3], m[4]}`

/** KEYS: s, e, n, then the session's documents. ARGV: invalidation channel, id, deadline → the session's route, or nil when there was no session. */
const remove = `${LIB}${DEADLINE_GUARD}
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local m = open(raw)
redis.call('DEL', unpack(KEYS))
redis.call('PUBLISH', ARGV[1], '-1 ' .. ARGV[2])
return m[4]`

/** KEYS: r. ARGV: "ids" to list them → the count, or the ids, of live sessions. */
const members = `${LIB}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now())
if ARGV[1] == 'ids' then return redis.call('ZRANGE', KEYS[1], 0, -1) end
return redis.call('ZCARD', KEYS[1])`

/**
 * KEYS: s, e, n. ARGV: stream, data, capacity, cache TTL ms, most bytes, deadline → the event's sequence number,
 * or 0 without a session. The oldest entries go while the log is over its count or its bytes (one
 * LPOP each, so the byte count stays exact); a new log (RPUSH made it) starts the count afresh.
 */
const append = `${LIB}${DEADLINE_GUARD}
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local m, rest = open(raw)
m[2] = m[2] + 1
redis.call('SET', KEYS[1], seal(m, rest), 'KEEPTTL')
local entry = m[2] .. ' ' .. now() .. ' ' .. ARGV[1] .. ' ' .. ARGV[2]
local length = redis.call('RPUSH', KEYS[2], entry)
local bytes = #entry
if length > 1 then bytes = redis.call('INCRBY', KEYS[3], #entry) else redis.call('SET', KEYS[3], bytes) end
local capacity, most = tonumber(ARGV[3]), tonumber(ARGV[5])
while length > capacity or (bytes > most and length > 1) do
  bytes = bytes - #redis.call('LPOP', KEYS[2])
  length = length - 1
end
redis.call('SET', KEYS[3], bytes)
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return m[2]`

/** KEYS: s, e → {last sequence issued, now, entries} or nil without a session. */
const replay = `${LIB}
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local m = open(raw)
return {m[2], now(), redis.call('LRANGE', KEYS[2], 0, -1)}`

/** KEYS: a document → "<version>\n<JSON>" or nil. */
const docRead = `return redis.call('GET', KEYS[1])`

/**
 * KEYS: a document, then its session's record (a route's document: itself again). ARGV: the version
 * expected (0: none yet), the JSON, 's' for a session's document, deadline → the new version, -1
 * when the version moved on, 0 when the session is gone. A session's document takes the record's TTL.
 */
const docWrite = `${DEADLINE_GUARD}local ttl = nil
if ARGV[3] == 's' then
  ttl = redis.call('PTTL', KEYS[2])
  if ttl < 0 then return 0 end
end
local raw = redis.call('GET', KEYS[1])
local version = 0
if raw then version = tonumber(string.sub(raw, 1, string.find(raw, '\\n', 1, true) - 1)) end
if version ~= tonumber(ARGV[1]) then return -1 end
version = version + 1
if ttl then
  redis.call('SET', KEYS[1], version .. '\\n' .. ARGV[2], 'PX', ttl)
else
  redis.call('SET', KEYS[1], version .. '\\n' .. ARGV[2])
end
return version`

/**
 * KEYS: the channel (not a key: named so that Redis Cluster routes the script by it). ARGV: message.
 * A bus channel's messages are all published on one node, so its subscribers get them in publish
 * order; a plain PUBLISH from a cluster client goes to any node, and two nodes may deliver out of order.
 */
const publish = `return redis.call('PUBLISH', KEYS[1], ARGV[1])`

/** Every script with its number of keys, as ioredis `defineCommand` takes them. */
export const SCRIPTS = {
  mcpEdgeCreate: { numberOfKeys: 3, lua: create },
  mcpEdgeIndex: { numberOfKeys: 1, lua: index },
  mcpEdgePublish: { numberOfKeys: 1, lua: publish },
  mcpEdgeGet: { numberOfKeys: 1, lua: get },
  mcpEdgeUpdate: { numberOfKeys: 1, lua: update },
  mcpEdgeTouch: { numberOfKeys: 3, lua: touch },
  mcpEdgeDelete: { numberOfKeys: 5, lua: remove },
  mcpEdgeDocRead: { numberOfKeys: 1, lua: docRead },
  mcpEdgeDocWrite: { numberOfKeys: 2, lua: docWrite },
  mcpEdgeMembers: { numberOfKeys: 1, lua: members },
  mcpEdgeAppend: { numberOfKeys: 3, lua: append },
  mcpEdgeReplay: { numberOfKeys: 2, lua: replay },
} as const

export type ScriptName = keyof typeof SCRIPTS
