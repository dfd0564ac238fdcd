// The per-user OAuth pieces that need no server: the Bearer challenge parser, PKCE, and the store's
// pending consents (single use under a race, bounded counts, sealed and bound to their key) and tokens.
import { createHash, randomBytes } from 'node:crypto'
import t from 'tap'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { MemoryCredentialCache } from '../../gateway/upstream/credentials/credential-cache.ts'
import { SealedCache } from '../../gateway/upstream/credentials/sealed-cache.ts'
import { parseBearerChallenge } from '../../gateway/upstream/credentials/oauth/discovery.ts'
import { OAuthStore, type PendingConsent } from '../../gateway/upstream/credentials/oauth/oauth-store.ts'
import { pkcePair } from '../../gateway/upstream/credentials/oauth/token-requests.ts'

const sealer = (kid: string, key = randomBytes(32)) => new SealedCache(new MemoryCredentialCache(), [{ kid, key }])

t.test('WWW-Authenticate: the Bearer challenge\'s parameters, quoted or not, among other schemes', async (t) => {
  t.same(parseBearerChallenge('Bearer resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp", scope="a b"'), {
    resourceMetadata: 'https://r.example/.well-known/oauth-protected-resource/mcp', scope: 'a b',
  })
  t.same(parseBearerChallenge('Basic realm="x", Bearer error=invalid_token, scope="mcp"'), { scope: 'mcp', error: 'invalid_token' })
  t.same(parseBearerChallenge('bearer scope="q\\"uoted"'), { scope: 'q"uoted' })
  t.equal(parseBearerChallenge('Basic realm="x"'), undefined, 'no Bearer challenge')
  t.equal(parseBearerChallenge(undefined), undefined)
})

t.test('PKCE: a 43-character verifier and its S256 challenge', async (t) => {
  const { verifier, challenge } = pkcePair()
  t.match(verifier, /^[A-Za-z0-9_-]{43}$/)
  t.equal(challenge, createHash('sha256').update(verifier).digest('base64url'))
  t.not(pkcePair().verifier, verifier, 'fresh each time')
})

const pending = (principal: string): PendingConsent => ({
  principal, upstreamId: 'u1', upstream: 'docs', verifier: 'v'.repeat(43), redirectUri: 'https://gw/cb', resource: 'https://r/mcp',
  issuer: 'https://as', resourceMetadata: 'https://r/.well-known/oauth-protected-resource/mcp', expiresAt: Date.now() + 60_000,
})

t.test('pending consents: taken once under a race, counted per principal and in total, refused when forged', async (t) => {
  const store = new MemoryStore({ eventCapacity: 8, cacheTtl: 60 })
  t.teardown(() => store.close())
  const oauth = new OAuthStore(store.tasks, sealer('k1'))
  await oauth.addPending('state-a', pending('alice'))
  await oauth.addPending('state-b', pending('alice'))
  await oauth.addPending('state-c', pending('bob'))
  t.same(await oauth.pendingCounts('alice'), { principal: 2, total: 3 })
  const taken = await Promise.all(Array.from({ length: 5 }, () => oauth.takePending('state-a')))
  t.equal(taken.filter((entry) => entry !== undefined).length, 1, 'five concurrent takes: one gets it')
  t.equal(taken.find((entry) => entry !== undefined)?.principal, 'alice')
  t.equal(await oauth.takePending('state-a'), undefined, 'a replay gets nothing')
  t.equal(await oauth.takePending('forged'), undefined, 'a forged state gets nothing')
  // A taken state stays a tombstone for 1 ms (the compare-and-set's mark); within that millisecond it
  // still counts, so on a fast machine the count right after the take saw it.
  await new Promise((resolve) => setTimeout(resolve, 5))
  t.same(await oauth.pendingCounts('alice'), { principal: 1, total: 2 }, 'the taken one no longer counts')
  const expired = { ...pending('carol'), expiresAt: Date.now() + 30 }
  await oauth.addPending('state-d', expired)
  await new Promise((resolve) => setTimeout(resolve, 60))
  t.equal(await oauth.takePending('state-d'), undefined, 'an expired state gets nothing')
})

t.test('tokens: sealed per (principal, upstream), unreadable with another key, rotated keys still open', async (t) => {
  const store = new MemoryStore({ eventCapacity: 8, cacheTtl: 60 })
  t.teardown(() => store.close())
  const oldKey = randomBytes(32)
  const before = new OAuthStore(store.tasks, sealer('old', oldKey))
  await before.saveTokens('u1', 'alice', { accessToken: 'at-alice', refreshToken: 'rt-alice' }, 60_000)
  const raw = await store.tasks.read(OAuthStore.tokenKey('u1', 'alice'))
  t.notOk(raw!.data.includes('at-alice') || raw!.data.includes('rt-alice'), 'the stored value holds no token')
  t.match(raw!.data, /^v1\.old\./, 'sealed with key "old"')
  t.equal(await new OAuthStore(store.tasks, sealer('old')).tokens('u1', 'alice'), undefined, 'another key with the same id opens nothing')
  const rotated = new OAuthStore(store.tasks, new SealedCache(new MemoryCredentialCache(), [{ kid: 'new', key: randomBytes(32) }, { kid: 'old', key: oldKey }]))
  t.equal((await rotated.tokens('u1', 'alice'))?.tokens.accessToken, 'at-alice', 'after rotation the old key still opens')
  t.equal(await rotated.tokens('u1', 'bob'), undefined, 'bob holds nothing')
  // A value copied under bob's key does not open there (the key is the additional data).
  await store.tasks.write(OAuthStore.tokenKey('u1', 'bob'), raw!.data, 0, 60_000)
  t.equal(await rotated.tokens('u1', 'bob'), undefined, 'alice\'s sealed tokens do not open as bob\'s')
  const held = await rotated.tokens('u1', 'alice')
  t.equal(await rotated.replaceTokens('u1', 'alice', held!.version + 1, { accessToken: 'x' }, 60_000), false, 'a refresh over a stale version loses')
  t.equal(await rotated.dropTokens('u1', 'alice'), true)
  t.equal(await rotated.tokens('u1', 'alice'), undefined, 'dropped')
})
