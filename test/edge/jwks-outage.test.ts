/**
 * A JWKS that fails (issue 26): the provider answering 500 turned valid tokens into 401
 * `invalid_token` (so clients re-authorized against a dead provider), and every unknown kid or new
 * token fetched the JWKS again (99–103 fetches per 150 requests). With a real JWKS server on loopback
 * made to fail and counting its fetches: the keys in hand keep verifying, a token whose key cannot
 * be had is a 503 with Retry-After, and fetches stay at one per cooldown whatever the traffic. On the
 * hot path's gateway and on Fastify's (`trust_proxy`) alike.
 */
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { bearer, INIT, post } from './fixtures/http.ts'
import { makeKey, startIssuer, type TestIssuer, type TestKey } from './fixtures/test-issuer.ts'

t.setTimeout(180_000)
const ECHO = path.resolve('handlers/echo.ts')
const AUDIENCE = 'https://mcp.test/tools'
const CACHE_S = 1
const COOLDOWN_S = 3

async function gatewayFor(t: Test, issuer: TestIssuer, top: object): Promise<string> {
  const gateway = await startGateway(configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    ...top,
    routes: [{
      location: '/mcp', handler: ECHO, server: { name: 'echo', version: '1.0.0' },
      auth: { jwt: { issuer: issuer.url, audience: AUDIENCE, jwks_uri: issuer.jwksUri, jwks_cache: CACHE_S, jwks_cooldown: COOLDOWN_S } },
    }],
  }, '<test>'))
  t.teardown(() => gateway.close())
  return `${gateway.url}/mcp`
}

let serial = 0
/** A fresh token (never seen, so never in the verified-token cache) signed with `key`. */
const fresh = (issuer: TestIssuer, key: TestKey): Promise<string> => issuer.mint(key, { sub: `user-${serial++}` }, { audience: AUDIENCE })

async function initializeWith(url: string, token: string): Promise<{ status: number; retryAfter: string | null; body: string }> {
  const response = await post(url, INIT, bearer(token))
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() }
}

/** The fetches allowed over `ms` of traffic: the one that may be running at its start, then one per cooldown. */
const allowedFetches = (ms: number): number => 1 + Math.ceil(ms / (COOLDOWN_S * 1000))

for (const [way, top] of [['hot path', {}], ['Fastify', { trust_proxy: true }]] as const) {
  t.test(`${way}: a JWKS that answers 500, then one that is slow, then back`, async (t) => {
    const keyA = await makeKey('a')
    const keyB = await makeKey('b')
    const issuer = await startIssuer(t, [keyA])
    const url = await gatewayFor(t, issuer, top)
    t.equal((await initializeWith(url, await fresh(issuer, keyA))).status, 200, 'healthy: a token is accepted')

    issuer.jwksStatus = 500
    // The keys in hand are now older than jwks_cache, and the cooldown of the last fetch is over.
    await sleep(Math.max(CACHE_S, COOLDOWN_S) * 1000 + 200)
    let began = Date.now()
    let before = issuer.fetches
    const tokens = await Promise.all(Array.from({ length: 50 }, () => fresh(issuer, keyA)))
    const known = await Promise.all(tokens.map((token) => initializeWith(url, token)))
    t.same(known.map((answer) => answer.status), known.map(() => 200), 'JWKS answering 500: 50 of 50 new valid tokens accepted with the keys in hand')

    const unknown: Array<{ status: number; retryAfter: string | null; body: string }> = []
    for (let round = 0; round < 10; round++) {
      const batch = await Promise.all(Array.from({ length: 10 }, async () => initializeWith(url, await fresh(issuer, keyB))))
      unknown.push(...batch)
    }
    const fetched = issuer.fetches - before
    t.same(unknown.map((answer) => answer.status), unknown.map(() => 503), 'a token whose key cannot be had now: 503, 100 of 100 (not 401 invalid_token)')
    t.ok(unknown.every((answer) => /^[1-3]$/.test(answer.retryAfter ?? '')), `with Retry-After within the cooldown (first: ${unknown[0]?.retryAfter})`)
    t.match(JSON.parse(unknown[0]!.body), { jsonrpc: '2.0', error: { message: /Service Unavailable: access tokens cannot be checked now; retry later/ } }, 'the error table\'s row, nothing of the provider')
    t.ok(fetched <= allowedFetches(Date.now() - began), `150 requests over ${Date.now() - began} ms fetched the JWKS ${fetched} time(s): one per ${COOLDOWN_S} s cooldown at most`)

    // A slow provider (longer than the fetch's 5 s timeout): concurrent unknown kids share one fetch, then 503.
    issuer.jwksStatus = 200
    issuer.jwksDelayMs = 8000
    await sleep(COOLDOWN_S * 1000 + 100)
    before = issuer.fetches
    began = Date.now()
    const slowRound = Promise.all(Array.from({ length: 20 }, async () => initializeWith(url, await fresh(issuer, keyB))))
    await sleep(500)
    const meanwhile = await initializeWith(url, await fresh(issuer, keyA))
    t.equal(meanwhile.status, 200, 'while the fetch waits on the slow provider, a token with a known key is accepted at once')
    t.ok(Date.now() - began < 4000, 'without waiting for the fetch')
    const slow = await slowRound
    t.same(slow.map((answer) => answer.status), slow.map(() => 503), 'slow provider: 20 of 20 unknown-kid tokens get 503')
    t.ok(slow.every((answer) => answer.retryAfter !== null), 'each with Retry-After')
    t.equal(issuer.fetches - before, 1, 'twenty requests, one fetch')
    t.ok(Date.now() - began < 7000, `answered when the fetch timed out, not when the provider did (${Date.now() - began} ms)`)

    // Back: the rotated key is published; once the cooldown is over, a fetch finds it.
    issuer.jwksDelayMs = 0
    issuer.published = [keyA, keyB]
    await sleep(COOLDOWN_S * 1000 + 100)
    const back = await initializeWith(url, await fresh(issuer, keyB))
    t.equal(back.status, 200, 'the provider back: the new key verifies', { body: back.body })
    const gone = await initializeWith(url, await fresh(issuer, await makeKey('c')))
    t.equal(gone.status, 401, 'and a key it does not publish is 401 again (the last fetch succeeded)')
    t.match(gone.body, /unknown key/)
  })
}
