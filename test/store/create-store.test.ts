// The store section of the config: which backend a config gets, with which settings, and how the
// Redis connection takes its secrets and TLS from the environment.
import t from 'tap'
import { configFromObject, ConfigError } from '../../gateway/config/load.ts'
import { needsPrimary } from '../../gateway/server/cluster.ts'
import { createStore } from '../../gateway/store/create-store.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { RedisStore } from '../../gateway/store/redis.ts'
import { redisOptions } from '../../gateway/store/redis-connection.ts'

const route = { location: '/mcp', handler: 'h.ts', server: { name: 'x', version: '1' } }
const config = (extra: object) => configFromObject({ routes: [route], ...extra }, '<test>', {})

t.test('without a store: memory for one worker, the cluster primary for several', async (t) => {
  t.same(config({}).store, { type: 'memory', event_capacity: 1024, cache_ttl: 90, event_bytes: 8388608, event_bytes_total: 268435456, session_bytes_total: 268435456, session_bytes_per_principal: 16777216 })
  t.same(config({ workers: 4 }).store, { type: 'cluster', event_capacity: 1024, cache_ttl: 90, event_bytes: 8388608, event_bytes_total: 268435456, session_bytes_total: 268435456, session_bytes_per_principal: 16777216 })
  t.same(config({ workers: 'auto', store: { event_capacity: 8 } }).store, { type: 'cluster', event_capacity: 8, cache_ttl: 90, event_bytes: 8388608, event_bytes_total: 268435456, session_bytes_total: 268435456, session_bytes_per_principal: 16777216 }, 'keys without a type go to the default backend')
  t.same(config({ workers: 2, store: { type: 'memory' } }).store.type, 'memory', 'an explicit type is kept (start refuses it)')
  t.equal(needsPrimary(config({})), false, 'workers: 1 runs without a primary')
  t.equal(needsPrimary(config({ workers: 2 })), true)
  t.equal(needsPrimary(config({ store: { type: 'cluster' } })), true, 'the cluster store lives in a primary, even for one worker')
  t.equal(config({}).drain_timeout, 10)
})

t.test('redis: defaults, and a url is required', async (t) => {
  t.same(config({ store: { type: 'redis', url: 'redis://cache:6379/2' } }).store, {
    type: 'redis',
    url: 'redis://cache:6379/2',
    key_prefix: 'mcp-edge:',
    event_capacity: 1024,
    cache_ttl: 90,
    event_bytes: 8388608,
    connect_timeout: 5,
    command_timeout: 2,
  })
  t.same(config({ workers: 3, store: { type: 'redis', url: 'rediss://cache', key_prefix: 'a:' } }).store.type, 'redis', 'several workers on Redis: no cluster store')
  t.throws(() => config({ store: { type: 'redis' } }), ConfigError, 'url missing')
  t.throws(() => config({ store: { type: 'redis', url: 'http://cache' } }), ConfigError, 'not a redis url')
  t.throws(() => config({ store: { type: 'cluster', url: 'redis://cache' } }), ConfigError, 'a key of another backend')
  t.throws(() => config({ store: { type: 'memory', key_prefix: 'x' } }), ConfigError)
})

t.test('createStore builds each backend', async (t) => {
  const memory = createStore(config({}).store)
  t.ok(memory instanceof MemoryStore)
  await memory.close()
  const redis = createStore(config({ store: { type: 'redis', url: 'redis://127.0.0.1:1', connect_timeout: 0.2 } }).store)
  t.ok(redis instanceof RedisStore)
  t.equal(await redis.ready(), false, 'nothing listens there: not ready, and no crash')
  await redis.close()
  t.throws(() => createStore(config({ workers: 2 }).store), /cluster primary/, 'the cluster store needs a primary to talk to')
})

t.test('Redis secrets and TLS come from the environment', async (t) => {
  const connection = { url: 'redis://cache:6379', connectTimeoutMs: 1000, commandTimeoutMs: 500 }
  const plain = redisOptions({ ...connection, env: {} }, 'commands')
  t.match(plain, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500, connectTimeout: 1000 }, 'fail fast, never queue')
  t.equal(plain.password, undefined)
  t.equal(plain.tls, undefined)
  t.equal(typeof plain.retryStrategy, 'function', 'reconnects by itself')
  t.equal(plain.retryStrategy!(100), 2000, 'at most every 2 s')
  const secret = redisOptions({ ...connection, env: { REDIS_PASSWORD: 's3cret', REDIS_USERNAME: 'edge', REDIS_TLS: '1' } }, 'subscriber')
  t.match(secret, { password: 's3cret', username: 'edge', tls: {} })
  t.equal(secret.commandTimeout, undefined, 'the subscriber waits for messages, it has no command timeout')
})
