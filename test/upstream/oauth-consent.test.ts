// Per-user OAuth to a remote MCP server (auth.oauth), end to end with real processes: two gateway
// processes on one Redis, oidc-provider as the authorization server (dynamic registration, code +
// PKCE, resource indicators, refresh tokens), the official SDK's MCP server upstream checking bearer
// tokens against the issuer's JWKS, and official SDK clients downstream. The consent step travels as a
// URL elicitation; the test plays the browser (oidc-provider's login and consent forms) and lands the
// redirect on the host that did NOT ask. Then: the token is used from the other host, is unreadable in
// Redis, appears in no log line; a replayed or forged state is refused; a decline and a client without
// URL elicitation get clean errors; a revoked token with an expired refresh token goes back to the
// consent step for that principal only, and the upstream is never marked down.
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { startRedis } from '../store/redis-server.ts'
import { consentAsBrowser, startAuthorizationServer, startProtectedUpstream, type ProtectedUpstream } from './fixtures/oauth-parties.ts'

t.setTimeout(240_000)

const BIN = fileURLToPath(new URL('../../gateway/bin.mjs', import.meta.url))

/** The public redirect URI: a load balancer's address in production; here the browser stops at it and the test sends the request to the host it picks. */
const REDIRECT = 'http://127.0.0.1:1/oauth/callback'
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

/** Whatever `key` holds in Redis, as text (every data type the store uses). */
async function rawValue(client: Redis, key: string): Promise<string> {
  switch (await client.type(key)) {
    case 'string': return (await client.get(key)) ?? ''
    case 'hash': return JSON.stringify(await client.hgetall(key))
    case 'zset': return JSON.stringify(await client.zrange(key, '0', '-1'))
    case 'set': return JSON.stringify(await client.smembers(key))
    case 'list': return JSON.stringify(await client.lrange(key, 0, -1))
    case 'stream': return JSON.stringify(await client.xrange(key, '-', '+'))
    default: return ''
  }
}

interface Elicited { url: string; elicitationId?: string; message: string }

/** An SDK client as `user`; `onUrl` plays the user's part of a URL elicitation (undefined: no URL elicitation declared). */
async function connectAs(t: Test, gateway: GatewayProcess, key: string, onUrl?: (asked: Elicited) => Promise<'accept' | 'decline'>): Promise<Client> {
  const client = new Client({ name: `as-${key}`, version: '1.0.0' }, { capabilities: onUrl === undefined ? {} : { elicitation: { url: {} } } })
  if (onUrl !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as unknown as Elicited & { mode: string }
      return { action: await onUrl(params) }
    })
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/p`), { requestInit: { headers: { 'x-api-key': key } } }))
  t.teardown(() => client.close())
  return client
}

t.test('consent through a URL elicitation, the redirect on the other host, tokens per principal in Redis', async (t) => {
  const redis = await startRedis(t)
  let upstream: ProtectedUpstream | undefined
  const as = await startAuthorizationServer(t, () => upstream!.url)
  upstream = await startProtectedUpstream(t, () => as.issuer)

  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-oauth-'))
  const keys: Record<string, string> = {}
  for (const user of ['alice', 'bob', 'carol', 'dave']) keys[user] = `key-${user}-${randomBytes(12).toString('hex')}`
  const keysFile = path.join(folder, 'keys.yaml')
  writeFileSync(keysFile, JSON.stringify({ keys: Object.entries(keys).map(([principal, key]) => ({ sha256: createHash('sha256').update(key).digest('hex'), principal })) }))
  const sealing = randomBytes(32).toString('base64')
  const config = {
    store: { type: 'redis', url: redis.url, key_prefix: 'oauth:' },
    token_encryption: { keys: [{ kid: 'k1', value: sealing }] },
    routes: [{
      location: '/p',
      server: { name: 'proxy', version: '1.0.0' },
      read_timeout: 30,
      auth: { api_keys: keysFile },
      prefix: 'never',
      upstreams: [{ name: 'docs', url: upstream.url, auth: { oauth: { redirect_uri: REDIRECT, timeout: 5, consent_wait: 30 } } }],
    }],
  }
  const [a, b] = await Promise.all([startGatewayProcess(t, config), startGatewayProcess(t, config)]) as [GatewayProcess, GatewayProcess]

  /** The user's browser: signs in as `login` and sends the redirect to `host` (as a load balancer could). */
  const callbacks: string[] = []
  const browse = async (asked: Elicited, login: string, host: GatewayProcess): Promise<{ status: number; body: string }> => {
    const stop = await consentAsBrowser(asked.url, login, (url) => url.href.startsWith(REDIRECT))
    t.ok(stop.url.href.startsWith(REDIRECT), `the authorization server sent ${login}'s browser to the redirect URI`)
    callbacks.push(stop.url.search)
    const landed = await fetch(`${host.url}${stop.url.pathname}${stop.url.search}`)
    return { status: landed.status, body: await landed.text() }
  }

  // alice asks through host A; her browser comes back through host B.
  const asked: Elicited[] = []
  const alice = await connectAs(t, a, keys.alice!, async (request) => {
    asked.push(request)
    const landed = await browse(request, 'alice', b)
    t.equal(landed.status, 200, 'host B finished the code exchange')
    t.match(landed.body, /Access to &#34;docs&#34; is granted/)
    return 'accept'
  })
  t.equal(text(await alice.callTool({ name: 'whoami' })), 'you are alice', 'the call went on after the consent, as alice')
  t.equal(asked.length, 1, 'one URL elicitation')
  const authorization = new URL(asked[0]!.url)
  t.equal(authorization.origin, as.issuer, 'the URL is the authorization server\'s')
  t.equal(authorization.searchParams.get('code_challenge_method'), 'S256', 'PKCE S256')
  t.equal(authorization.searchParams.get('resource'), upstream.url, 'resource indicator: the upstream')
  t.equal(authorization.searchParams.get('redirect_uri'), REDIRECT)
  t.ok((authorization.searchParams.get('state') ?? '').length >= 40, 'a long random state')
  t.match(asked[0]!.message, /docs/, 'the message names the upstream')
  t.equal(as.registrations, 1, 'the gateway registered itself once (RFC 7591)')

  // alice again, through a new session on host B: B reads the token host B stored for her; no consent, no exchange.
  const aliceOnB = await connectAs(t, b, keys.alice!, async () => t.fail('no second consent') as never)
  for (let n = 0; n < 3; n++) t.equal(text(await aliceOnB.callTool({ name: 'whoami' })), 'you are alice', 'host B calls as alice')
  t.equal(as.tokenHits.authorization_code, 1, 'one code exchange for alice')
  t.equal(as.tokenHits.refresh_token ?? 0, 0, 'no refresh while the token is valid')

  // The state is single-use and cannot be forged.
  const replay = await fetch(`${a.url}/oauth/callback${callbacks[0]}`)
  t.equal(replay.status, 400, 'a replayed state is refused')
  t.match(await replay.text(), /unknown, expired, or was already used/)
  const forged = await fetch(`${a.url}/oauth/callback?state=${randomBytes(32).toString('base64url')}&code=forged`)
  t.equal(forged.status, 400, 'a forged state is refused')
  const none = await fetch(`${b.url}/oauth/callback?code=x`)
  t.equal(none.status, 400, 'no state: refused')

  // bob declines: a clean error naming the upstream; alice is untouched, the upstream is not down.
  const bob = await connectAs(t, b, keys.bob!, async () => 'decline')
  const declined = await bob.callTool({ name: 'whoami' })
  t.equal(declined.isError, true, 'bob\'s call is an isError result')
  t.match(text(declined), /"docs".*declined/, 'naming the upstream and the decline')
  t.equal(text(await alice.callTool({ name: 'whoami' })), 'you are alice', 'alice still calls')

  // carol's client cannot take a URL elicitation: the -32042 error carries it.
  const carol = await connectAs(t, a, keys.carol!)
  const refused = await carol.callTool({ name: 'whoami' }).then(() => undefined, (error: unknown) => error)
  t.ok(refused instanceof McpError, 'a JSON-RPC error')
  t.equal((refused as McpError).code, -32042, 'URLElicitationRequired')
  const elicitations = ((refused as McpError).data as { elicitations?: Array<{ mode: string; url: string }> }).elicitations
  t.equal(elicitations?.[0]?.mode, 'url')
  t.ok(elicitations?.[0]?.url.startsWith(`${as.issuer}/`), 'with the authorization URL')

  // dave's refresh token expires quickly; the upstream then refuses his token (revoked): back to consent, for dave only.
  as.ttl.refresh = 2
  let daveConsents = 0
  const dave = await connectAs(t, a, keys.dave!, async (request) => {
    daveConsents++
    const landed = await browse(request, 'dave', daveConsents % 2 === 1 ? b : a)
    t.equal(landed.status, 200, `dave's consent ${daveConsents} completed`)
    return 'accept'
  })
  t.equal(text(await dave.callTool({ name: 'whoami' })), 'you are dave')
  await sleep(2500)
  upstream.revoke('dave')
  await sleep(1100)
  t.equal(text(await dave.callTool({ name: 'whoami' })), 'you are dave', 'after the upstream refused his token, dave consented again and the call went on')
  t.equal(daveConsents, 2, 'a second consent for dave')
  t.ok((as.tokenHits.refresh_token ?? 0) >= 1, 'the gateway tried the (expired) refresh token first')
  t.equal(text(await aliceOnB.callTool({ name: 'whoami' })), 'you are alice', 'alice never had to consent again')
  for (const gateway of [a, b]) {
    const ready = await (await fetch(`${gateway.url}/readyz`)).json() as { upstreams: Record<string, Record<string, { state: string }>> }
    t.not(ready.upstreams['/p']!.docs!.state, 'down', 'the upstream is not marked down on either host')
  }

  // At rest: every value under the prefix is sealed; no token the upstream saw is in Redis.
  const client = new Redis(redis.url)
  t.teardown(() => client.quit())
  const stored = (await client.keys('oauth:*')).filter((key) => key.includes('t:{oauth:t:'))
  t.ok(stored.length >= 2, 'token entries exist in Redis')
  const tokens = [...upstream.authorizations].map((header) => header.slice('Bearer '.length))
  t.ok(tokens.length >= 3, 'the upstream saw the tokens of alice and dave')
  for (const key of await client.keys('oauth:*')) {
    const raw = await rawValue(client, key)
    for (const token of tokens) t.notOk(raw.includes(token) || raw.includes(token.split('.')[1]!), `${key} holds no token`)
    if (key.includes('t:{oauth:t:') && !raw.endsWith('\n-')) t.match(raw, /^\d+\nv1\.k1\./, `${key} is sealed with key k1`)
  }

  // No token, code or state in any log line of either host.
  const logs = [...a.logs, ...b.logs].map((line) => JSON.stringify(line)).join('\n')
  t.match(logs, /OAuth consent completed/, 'the consent is logged')
  for (const token of tokens) t.notOk(logs.includes(token), 'no access token in the logs')
  for (const search of callbacks) {
    const query = new URLSearchParams(search)
    t.notOk(logs.includes(query.get('code')!), 'no authorization code in the logs')
    t.notOk(logs.includes(query.get('state')!), 'no state in the logs')
  }
  for (const key of Object.values(keys)) t.notOk(logs.includes(key), 'no caller API key in the logs')
  // The caller's own credential never reached the upstream.
  for (const key of Object.values(keys)) t.notOk([...upstream.authorizations].some((header) => header.includes(key)), 'no caller key upstream')

  // The operator revokes alice's grant: every host stops using it (within the local copy's 15 s), and her next call asks again.
  const configFile = path.join(folder, 'gateway.yaml')
  writeFileSync(configFile, JSON.stringify(config))
  const cli = (...args: string[]) => promisify(execFile)(process.execPath, [BIN, 'oauth-revoke', '--config', configFile, ...args]).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout + error.stderr }),
  )
  const revoked = await cli('--principal', 'alice', '--upstream', 'docs')
  t.equal(revoked.code, 0, 'oauth-revoke exits 0')
  t.match(revoked.stdout, /revoked: alice at docs/)
  t.equal((await cli('--principal', 'alice', '--upstream', 'docs')).code, 2, 'a second revoke finds nothing: exit 2')
  t.equal((await cli('--principal', 'alice', '--upstream', 'nope')).code, 2, 'an unknown upstream: exit 2')
  await sleep(15_500)
  t.equal(text(await alice.callTool({ name: 'whoami' })), 'you are alice', 'alice signed in again')
  t.equal(asked.length, 2, 'after the revocation, alice was asked to consent again')
})
