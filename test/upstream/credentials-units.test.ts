/**
 * The parts of the upstream-credential seam on their own: the sealed cache (AES-256-GCM bound to its
 * key, rotation, tampering), the token keeper's single flight (within a process, and across two
 * "processes" sharing one cache through its lock), refresh and drop, the config's `auth:` kinds, and a
 * Redis store without token keys refused at start.
 */
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { ConfigError } from '../../gateway/config/config-error.ts'
import { CredentialContext } from '../../gateway/upstream/credentials/context.ts'
import { MemoryCredentialCache, type CredentialCache } from '../../gateway/upstream/credentials/credential-cache.ts'
import { loadSealingKeys, SealedCache } from '../../gateway/upstream/credentials/sealed-cache.ts'
import { TokenKeeper } from '../../gateway/upstream/credentials/token-keeper.ts'
import type { IssuedToken } from '../../gateway/upstream/credentials/token-endpoint.ts'

const silent = pino({ level: 'silent' })
const key = (): string => randomBytes(32).toString('base64')

t.test('sealed values: bound to their cache key, opened by any configured key, refused when tampered', async (t) => {
  const inner = new MemoryCredentialCache()
  const [k2, k1] = loadSealingKeys({ keys: [{ kid: 'k2', value: key() }, { kid: 'k1', value: randomBytes(32).toString('hex') }] }) as [never, never]
  const old = new SealedCache(inner, [k1])
  await old.set('tx:a', 'secret-token-a', 60_000)
  const raw = (await inner.get('tx:a'))!
  t.match(raw, /^v1\.k1\./, 'sealed under k1')
  t.notOk(raw.includes('secret-token-a'), 'the raw value does not hold the token')
  const rotated = new SealedCache(inner, [k2, k1])
  t.equal(await rotated.get('tx:a'), 'secret-token-a', 'the old key still opens after rotation')
  await rotated.set('tx:b', 'secret-token-b', 60_000)
  t.match((await inner.get('tx:b'))!, /^v1\.k2\./, 'new values are sealed with the first key')
  t.equal(await old.get('tx:b'), undefined, 'a cache without k2 cannot open them')
  t.equal(rotated.open('tx:other', raw), undefined, 'a value moved under another key does not open')
  // One character of the tag changed for another (the check looked at the last character, not the one
  // replaced, so one value in 64 "tampered" nothing: a CI run drew one).
  const at = raw.length - 2
  const flipped = raw.slice(0, at) + (raw[at] === 'A' ? 'B' : 'A') + raw.slice(at + 1)
  t.not(flipped, raw, 'the value was changed')
  t.equal(rotated.open('tx:a', flipped), undefined, 'a tampered value does not open')
  t.throws(() => loadSealingKeys({ keys: [{ kid: 'short', value: 'abc' }] }), /32 bytes/, 'a short key is refused')
})

t.test('the token keeper fetches once for many calls, and once across processes sharing a cache', async (t) => {
  const cache = new MemoryCredentialCache()
  let fetches = 0
  const fetcher = async (label: string): Promise<IssuedToken> => {
    fetches++
    await sleep(50)
    return { accessToken: `token-${label}-${fetches}`, tokenType: 'Bearer', expiresAt: Date.now() + 60_000 }
  }
  const options = { cache, logger: silent, refreshBeforeMs: 30_000, fetchTimeoutMs: 2000, maxHeld: 10 }
  const a = new TokenKeeper(options)
  const b = new TokenKeeper(options)
  const answers = await Promise.all([...Array(10).keys()].map((n) => (n % 2 === 0 ? a : b).get('cc:x', fetcher, 'x')))
  t.equal(fetches, 1, 'one fetch for ten concurrent calls on two keepers')
  t.equal(new Set(answers.map((headers) => headers.authorization)).size, 1, 'every call got the same token')
  const held = a.get('cc:x', fetcher, 'x')
  t.notOk(held instanceof Promise, 'a held token is answered synchronously')
  t.equal(held, a.get('cc:x', fetcher, 'x'), 'as the same object every time')
  await a.drop('cc:x')
  const fresh = await a.get('cc:x', fetcher, 'x')
  t.equal(fetches, 2, 'a dropped token is fetched again')
  t.not(fresh.authorization, answers[0]!.authorization)
  t.equal((await b.get('cc:x', fetcher, 'x')).authorization, answers[0]!.authorization, 'the other keeper keeps its own until told')
})

t.test('a keeper that takes the lock just after another host let it go uses the stored token, no second fetch', async (t) => {
  // Host B reads the cache (nothing yet), host A fetches, stores and unlocks, then B takes the lock: B
  // must look again rather than fetch (two CI runs fetched twice on two hosts before it did).
  const shared = new MemoryCredentialCache()
  let fetches = 0
  const fetcher = async (): Promise<IssuedToken> => ({ accessToken: `token-${++fetches}`, tokenType: 'Bearer', expiresAt: Date.now() + 60_000 })
  let aDone: Promise<unknown> | undefined
  const a = new TokenKeeper({ cache: shared, logger: silent, refreshBeforeMs: 30_000, fetchTimeoutMs: 2000, maxHeld: 10 })
  // B's view of the same cache: its first lock waits until A has fetched, stored and unlocked.
  const slowLock: CredentialCache = {
    get: (key) => shared.get(key),
    set: (key, value, ttlMs) => shared.set(key, value, ttlMs),
    delete: (key) => shared.delete(key),
    close: () => shared.close(),
    lock: async (key, ttlMs) => {
      await aDone
      return shared.lock(key, ttlMs)
    },
  }
  const b = new TokenKeeper({ cache: slowLock, logger: silent, refreshBeforeMs: 30_000, fetchTimeoutMs: 2000, maxHeld: 10 })
  const bAnswer = b.get('cc:race', fetcher, 'x')
  aDone = Promise.resolve(a.get('cc:race', fetcher, 'x'))
  const [fromA, fromB] = await Promise.all([aDone, bAnswer]) as [{ authorization: string }, { authorization: string }]
  t.equal(fetches, 1, 'one fetch for both hosts')
  t.equal(fromB.authorization, fromA.authorization, 'B uses the token A stored')
})

t.test('a token near its expiry is refreshed in the background while it still serves', async (t) => {
  const cache = new MemoryCredentialCache()
  let fetches = 0
  const fetcher = async (): Promise<IssuedToken> => ({ accessToken: `t${++fetches}`, tokenType: 'Bearer', expiresAt: Date.now() + 8_000 })
  const keeper = new TokenKeeper({ cache, logger: silent, refreshBeforeMs: 30_000, fetchTimeoutMs: 2000, maxHeld: 10 })
  t.equal((await keeper.get('k', fetcher, undefined)).authorization, 'Bearer t1')
  // refresh_before (30 s) exceeds the lifetime (8 s): refreshed at half its life, here at once after 4 s.
  const early = keeper.get('k', fetcher, undefined)
  t.notOk(early instanceof Promise, 'within the first half of its life: held')
  await sleep(4100)
  const stale = keeper.get('k', fetcher, undefined)
  t.notOk(stale instanceof Promise, 'past its refresh time but valid: still answered at once')
  t.equal((stale as { authorization: string }).authorization, 'Bearer t1')
  await sleep(20)
  t.equal((keeper.get('k', fetcher, undefined) as { authorization: string }).authorization, 'Bearer t2', 'the next call has the refreshed token')
  t.equal(fetches, 2)
})

t.test('config: one auth kind per upstream; a Redis store needs token keys', async (t) => {
  const route = (auth: unknown) => ({ routes: [{ location: '/mcp', server: { name: 'x', version: '1' }, upstreams: [{ name: 'up', url: 'http://127.0.0.1:1/mcp', auth }] }] })
  const endpoint = { token_url: 'http://127.0.0.1:1/token', client_id: 'gw', client_secret: 's' }
  const loaded = configFromObject(route({ client_credentials: endpoint }))
  t.match(loaded.routes[0]!.upstreams[0]!.auth, { client_credentials: { ...endpoint, timeout: 5, refresh_before: 30 } }, 'defaults filled')
  t.match(configFromObject(route({ token_exchange: endpoint })).routes[0]!.upstreams[0]!.auth, { token_exchange: { max_cached: 10000 } })
  t.match(configFromObject(route({ identity_assertion: { audience: 'a' } })).routes[0]!.upstreams[0]!.auth, { identity_assertion: { audience: 'a', ttl_s: 60, claims: [] } })
  t.throws(() => configFromObject(route({ client_credentials: endpoint, token_exchange: endpoint })), ConfigError, 'two kinds at once are refused')
  t.throws(() => configFromObject(route({ kerberos: {} })), ConfigError, 'an unknown kind is refused')
  t.throws(() => configFromObject(route({ client_credentials: { ...endpoint, tokne_url: 'x' } })), ConfigError, 'a misspelt key is refused')
  t.throws(() => configFromObject(route({ token_exchange: { client_id: 'gw', client_secret: 's' } })), ConfigError, 'token_url is required')
  const files = configFromObject({ ...route({ headers: { 'x-token': 'file:secrets/token' } }), upstream_identity: { issuer: 'i', keys: [{ kid: 'a', file: 'k.pem' }] } }, '/etc/mcp-edge/gateway.yaml')
  t.equal(files.routes[0]!.upstreams[0]!.auth!.headers!['x-token'], 'file:/etc/mcp-edge/secrets/token', 'file: paths are relative to the config')
  t.equal(files.upstream_identity!.keys[0]!.file, '/etc/mcp-edge/k.pem')
  const redis = new CredentialContext(silent, { store: configFromObject({ ...route(undefined), store: { type: 'redis', url: 'redis://127.0.0.1:1' } }).store })
  t.throws(() => redis.cache, /token_encryption/, 'upstream tokens are not put in Redis unsealed')
})
