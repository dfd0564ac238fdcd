/**
 * Upstream credentials shared by two hosts: two gateway processes on one Redis behind a round-robin
 * balancer, oidc-provider as the authorization server, SDK upstreams that verify what they get, and
 * two SDK callers. A token obtained on one host is used on the other: one client-credentials token for
 * everyone and one exchange per principal while valid, counted at the token endpoint, even when the
 * first calls reach both hosts at once (the single flight spans processes). The tokens sit in Redis
 * sealed: the raw values hold none of them.
 */
import { randomBytes } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Redis } from 'ioredis'
import t from 'tap'
import { startGatewayProcess, type GatewayProcess } from '../cluster/gateway-process.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { startRedis } from '../store/redis-server.ts'
import { EXCHANGE_GRANT, GATEWAY_AUDIENCE, GATEWAY_CLIENT, startAuthorizationServer } from './fixtures/credentials-as.ts'
import { jwtCheck, startRecordingUpstream, whoami } from './fixtures/recording-upstream.ts'

t.setTimeout(180_000)

const REPORTS = 'urn:upstream:reports'
const NOTES = 'urn:upstream:notes'

t.test('two hosts on Redis share upstream tokens: one token, one exchange per principal, sealed at rest', async (t) => {
  const redis = await startRedis(t)
  const as = await startAuthorizationServer(t, ['alice', 'bob'], [REPORTS, NOTES])
  const reports = await startRecordingUpstream(t, jwtCheck(as.jwksUrl, as.issuer, REPORTS))
  const notes = await startRecordingUpstream(t, jwtCheck(as.jwksUrl, as.issuer, NOTES))
  const secret = as.secret(GATEWAY_CLIENT)
  const sealingKey = randomBytes(32).toString('base64')
  const tokenUrl = `${as.issuer}/token`
  const config = {
    store: { type: 'redis', url: redis.url, key_prefix: 'creds:' },
    token_encryption: { keys: [{ kid: 'k1', value: sealingKey }] },
    routes: [{
      location: '/mcp',
      server: { name: 'two-hosts', version: '1.0.0' },
      read_timeout: 10,
      auth: { jwt: { issuer: as.issuer, audience: GATEWAY_AUDIENCE } },
      upstreams: [
        { name: 'reports', url: reports.url, auth: { client_credentials: { token_url: tokenUrl, client_id: GATEWAY_CLIENT, client_secret: secret, resource: REPORTS } } },
        { name: 'notes', url: notes.url, auth: { token_exchange: { token_url: tokenUrl, client_id: GATEWAY_CLIENT, client_secret: secret, audience: NOTES } } },
      ],
    }],
  }
  const hosts = (await Promise.all([startGatewayProcess(t, config), startGatewayProcess(t, config)])) as [GatewayProcess, GatewayProcess]
  const balancer = await roundRobin(t, hosts.map((host) => host.url))

  const tokens = new Map<string, string>()
  const clients = new Map<string, Client>()
  for (const name of ['alice', 'bob']) {
    const token = await as.callerToken(name)
    tokens.set(name, token)
    const client = new Client({ name, version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${balancer.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    t.teardown(() => client.close())
    clients.set(name, client)
  }

  // The first calls of both callers at once, on both hosts.
  const first = await Promise.all([...clients].flatMap(([name, client]) => [0, 1, 2, 3].map(async () => ({
    name,
    notes: whoami(await client.callTool({ name: 'notes__whoami' })),
    reports: whoami(await client.callTool({ name: 'reports__whoami' })),
  }))))
  for (const { name, notes: got, reports: gotReports } of first) {
    t.equal(got.sub, name, `${name}: the exchanged token speaks for the caller`)
    t.equal(gotReports.sub, GATEWAY_CLIENT, `${name}: the client-credentials token is the gateway's`)
  }
  for (let round = 0; round < 4; round++) {
    for (const [name, client] of clients) t.equal(whoami(await client.callTool({ name: 'notes__whoami' })).sub, name)
  }
  const calls = balancer.log.filter((entry) => entry.body?.method === 'tools/call')
  t.same(new Set(calls.map((entry) => entry.target)), new Set([0, 1]), 'the calls reached both hosts')
  t.equal(as.hits.get(`client_credentials|${REPORTS}`), 1, 'one client-credentials token for both hosts')
  t.equal(as.hits.get(`${EXCHANGE_GRANT}|${NOTES}`), 2, 'one exchange per principal for both hosts')

  // At rest: sealed values under the store's prefix, none of the tokens readable.
  const raw = new Redis(redis.url)
  t.teardown(() => raw.disconnect())
  const keys = await raw.keys('creds:c:*')
  const values = (await Promise.all(keys.map((key) => raw.get(key)))).filter((value): value is string => value !== null)
  t.equal(values.length, 3, 'three tokens kept (one per principal for notes, one for reports)')
  t.ok(values.every((value) => value.startsWith('v1.k1.')), 'each sealed with key k1')
  const issued = [...reports.log, ...notes.log].map((entry) => String(entry.headers.authorization ?? '').slice(7)).filter((value) => value !== '')
  t.ok(issued.length > 0)
  const dump = values.join('\n') + keys.join('\n')
  for (const token of [...new Set(issued), ...tokens.values()]) t.notOk(dump.includes(token), 'no token readable in Redis')
  t.ok(keys.every((key) => /^creds:c:(cc|tx):[A-Za-z0-9_-]{43}$/.test(key)), 'keys are hashes: no principal or setting readable in them')

  // Never passthrough, no secret in either host's log.
  for (const upstream of [reports, notes]) {
    const seen = JSON.stringify(upstream.log)
    for (const token of tokens.values()) t.notOk(seen.includes(token), 'no caller token reached an upstream')
  }
  const logs = JSON.stringify(hosts.map((host) => host.logs))
  for (const value of [...tokens.values(), ...new Set(issued), secret, sealingKey]) t.notOk(logs.includes(value), 'no token, secret or key in the logs')
})
