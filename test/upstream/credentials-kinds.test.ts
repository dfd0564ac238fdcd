/**
 * Acting for the caller toward upstreams, each `auth:` kind end to end: oidc-provider as the
 * authorization server, four SDK upstream servers that verify what they are sent (a static bearer from
 * a file; a client-credentials JWT, an exchanged JWT and a gateway identity assertion, each against its
 * issuer's JWKS with jose), one proxy route behind JWT auth, and the official SDK client as two callers.
 *
 * Proved: each upstream sees the identity its kind gives (the gateway, or the caller through exchange
 * and assertion); the client-credentials token is fetched once for everyone, the exchange once per
 * principal, while valid; a rotated header file is used without a restart; no upstream ever receives a
 * caller's token in a header or body (never passthrough), and no token or secret reaches the gateway's log.
 */
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { pino } from 'pino'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { eventually, freePort } from '../fixtures/waiting.ts'
import { EXCHANGE_GRANT, GATEWAY_AUDIENCE, GATEWAY_CLIENT, startAuthorizationServer } from './fixtures/credentials-as.ts'
import { jwtCheck, startRecordingUpstream, staticCheck, whoami } from './fixtures/recording-upstream.ts'

t.setTimeout(120_000)

const CC_AUDIENCE = 'urn:upstream:reports'
const TX_AUDIENCE = 'urn:upstream:notes'
const IA_AUDIENCE = 'urn:upstream:internal'
const GATEWAY_ISSUER = 'https://gateway.test/mcp-edge'

t.test('every auth: kind acts for the caller, and no caller token reaches an upstream', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-credentials-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const as = await startAuthorizationServer(t, ['alice', 'bob'], [CC_AUDIENCE, TX_AUDIENCE])
  const port = await freePort()
  const gatewayUrl = `http://127.0.0.1:${port}`

  // Secrets in files, as a mounted Secret would give them.
  const staticFile = path.join(folder, 'static-token')
  let staticValue = `Bearer static-${crypto.randomUUID()}`
  writeFileSync(staticFile, `${staticValue}\n`)
  const secretFile = path.join(folder, 'gateway-secret')
  writeFileSync(secretFile, as.secret(GATEWAY_CLIENT))
  const keyFile = path.join(folder, 'assertion-key.pem')
  writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const oldKeyFile = path.join(folder, 'assertion-key-old.pem')
  writeFileSync(oldKeyFile, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }))

  const staticUp = await startRecordingUpstream(t, staticCheck('x-api-token', () => staticValue), { header: 'x-api-token' })
  const ccUp = await startRecordingUpstream(t, jwtCheck(as.jwksUrl, as.issuer, CC_AUDIENCE))
  const txUp = await startRecordingUpstream(t, jwtCheck(as.jwksUrl, as.issuer, TX_AUDIENCE))
  const iaUp = await startRecordingUpstream(t, jwtCheck(`${gatewayUrl}/.well-known/mcp-edge/jwks.json`, GATEWAY_ISSUER, IA_AUDIENCE))
  const upstreams = [staticUp, ccUp, txUp, iaUp]

  const tokenUrl = `${as.issuer}/token`
  const config = configFromObject({
    listen: { host: '127.0.0.1', port },
    upstream_identity: { issuer: GATEWAY_ISSUER, keys: [{ kid: 'k2', file: keyFile }, { kid: 'k1', file: oldKeyFile }] },
    routes: [{
      location: '/mcp',
      server: { name: 'credentials', version: '1.0.0' },
      read_timeout: 10,
      auth: { jwt: { issuer: as.issuer, audience: GATEWAY_AUDIENCE } },
      upstreams: [
        { name: 'static', url: staticUp.url, auth: { headers: { 'x-api-token': `file:${staticFile}` } } },
        { name: 'cc', url: ccUp.url, auth: { client_credentials: { token_url: tokenUrl, client_id: GATEWAY_CLIENT, client_secret: `file:${secretFile}`, resource: CC_AUDIENCE, scope: 'mcp' } } },
        { name: 'tx', url: txUp.url, auth: { token_exchange: { token_url: tokenUrl, client_id: GATEWAY_CLIENT, client_secret: as.secret(GATEWAY_CLIENT), audience: TX_AUDIENCE, scope: 'notes:read' } } },
        { name: 'ia', url: iaUp.url, auth: { identity_assertion: { audience: IA_AUDIENCE, ttl_s: 60, claims: ['client_id', 'scope'] } } },
      ],
    }],
  }, path.join(folder, 'gateway.yaml'))
  const lines: string[] = []
  const logger = pino({ level: 'debug' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }))
  const gateway = await startGateway(config, { logger })
  t.teardown(() => gateway.close())

  const jwks = (await (await fetch(`${gatewayUrl}/.well-known/mcp-edge/jwks.json`)).json()) as { keys: Array<{ kid: string; alg: string; d?: string }> }
  t.same(jwks.keys.map((key) => [key.kid, key.alg]), [['k2', 'ES256'], ['k1', 'EdDSA']], 'both assertion keys are published, the signing one first')
  t.ok(jwks.keys.every((key) => key.d === undefined), 'the JWKS holds public keys only')

  const callers = new Map<string, { client: Client; token: string }>()
  for (const name of ['alice', 'bob']) {
    const token = await as.callerToken(name)
    const client = new Client({ name: `caller-${name}`, version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    t.teardown(() => client.close())
    callers.set(name, { client, token })
  }
  const alice = callers.get('alice')!
  const bob = callers.get('bob')!
  const tools = (await alice.client.listTools()).tools.map((tool) => tool.name).sort()
  t.same(tools, ['cc__whoami', 'ia__whoami', 'static__whoami', 'tx__whoami'], 'every upstream answered its tools/list with its credential')

  for (const [name, { client }] of callers) {
    for (let round = 0; round < 3; round++) {
      t.equal(whoami(await client.callTool({ name: 'static__whoami' })).sub, 'static:x-api-token', `${name}: static header from its file`)
      const cc = whoami(await client.callTool({ name: 'cc__whoami' }))
      t.equal(cc.sub, GATEWAY_CLIENT, `${name}: the client-credentials upstream sees the gateway`)
      const tx = whoami(await client.callTool({ name: 'tx__whoami' }))
      t.match(tx, { sub: name, aud: TX_AUDIENCE, act: { sub: GATEWAY_CLIENT } }, `${name}: the exchanged token speaks for the caller, acted by the gateway`)
      const ia = whoami(await client.callTool({ name: 'ia__whoami' }))
      t.match(ia, { iss: GATEWAY_ISSUER, sub: name, aud: IA_AUDIENCE, act: { sub: GATEWAY_ISSUER }, client_id: name, scope: 'mcp' }, `${name}: the identity assertion names the caller and its chosen claims`)
      t.ok((ia.exp as number) - (ia.iat as number) <= 60, 'the assertion is short-lived (ttl_s)')
    }
  }
  t.equal(as.hits.get(`client_credentials|${CC_AUDIENCE}`), 1, 'one client-credentials token for every caller and call')
  t.equal(as.hits.get(`${EXCHANGE_GRANT}|${TX_AUDIENCE}`), 2, 'one exchange per principal while valid')

  // Rotation without restart: the file is replaced (a rename, as a Secret volume does); the old value is refused from now on.
  const rotated = `Bearer static-${crypto.randomUUID()}`
  writeFileSync(`${staticFile}.new`, rotated)
  renameSync(`${staticFile}.new`, staticFile)
  const previous = staticValue
  staticValue = rotated
  await eventually(async () => {
    const result = await alice.client.callTool({ name: 'static__whoami' })
    return result.isError !== true
  }, 5000)
  const last = staticUp.log.at(-1)!
  t.equal(last.headers['x-api-token'], rotated, 'the rotated value is sent')
  t.not(previous, rotated)
  t.notOk(lines.join('').includes('upstream static') && lines.join('').includes(previous), 'the old value is not logged')

  // A refused credential is that call's error, naming the upstream; the upstream stays up for the others.
  ccUp.verify = async () => undefined
  const refused = await bob.client.callTool({ name: 'cc__whoami' })
  t.equal(refused.isError, true, 'a refused credential fails that call')
  t.match((refused.content as Array<{ text: string }>)[0]!.text, /^Upstream "cc": the gateway could not authenticate to it \(rejected\)/, 'the failure names the upstream and why')
  t.equal(as.hits.get(`client_credentials|${CC_AUDIENCE}`), 2, 'the refused token was dropped and a new one asked for once')
  ccUp.verify = jwtCheck(as.jwksUrl, as.issuer, CC_AUDIENCE)
  t.equal(whoami(await bob.client.callTool({ name: 'cc__whoami' })).sub, GATEWAY_CLIENT, 'the next call works again')
  const ready = (await (await fetch(`${gatewayUrl}/readyz`)).json()) as { upstreams: Record<string, Record<string, { state: string }>> }
  t.equal(ready.upstreams['/mcp']?.cc?.state, 'up', 'a 401 did not mark the upstream down')

  // Never passthrough, and no secret in the logs.
  const secrets = [alice.token, bob.token, as.secret(GATEWAY_CLIENT), as.secret('alice'), as.secret('bob'), previous, rotated]
  for (const upstream of upstreams) {
    const seen = JSON.stringify(upstream.log)
    t.ok(upstream.log.length > 0, `${new URL(upstream.url).port}: the upstream was called`)
    for (const token of [alice.token, bob.token]) t.notOk(seen.includes(token), 'no caller token in any header or body an upstream got')
    t.notOk(seen.includes(as.secret(GATEWAY_CLIENT)), "the gateway's client secret never goes to an upstream")
  }
  const issued = [...ccUp.log, ...txUp.log, ...iaUp.log].map((entry) => String(entry.headers.authorization ?? '').slice(7)).filter((token) => token !== '')
  const logged = lines.join('')
  for (const value of [...secrets, ...issued]) t.notOk(logged.includes(value), 'no token or secret in the gateway log')
})
