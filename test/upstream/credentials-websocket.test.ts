/**
 * Per-caller credentials over a WebSocket upstream, where headers exist only at the handshake: an SDK
 * upstream over ws:// that verifies an exchanged token (oidc-provider's JWKS) when the connection
 * opens. Two callers get a connection each, authorised as themselves (never one shared between
 * principals), and neither caller's own token is in any handshake.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { freePort } from '../fixtures/waiting.ts'
import { EXCHANGE_GRANT, GATEWAY_AUDIENCE, GATEWAY_CLIENT, startAuthorizationServer } from './fixtures/credentials-as.ts'
import { jwtCheck, whoami } from './fixtures/recording-upstream.ts'
import { startWsUpstream } from './fixtures/ws-upstream.ts'

t.setTimeout(120_000)

const NOTES = 'urn:upstream:notes'

t.test('token exchange at the WebSocket handshake: a connection per principal, as that principal', async (t) => {
  const as = await startAuthorizationServer(t, ['alice', 'bob'], [NOTES])
  const upstream = await startWsUpstream(t, { verify: jwtCheck(as.jwksUrl, as.issuer, NOTES) })
  const port = await freePort()
  const config = configFromObject({
    listen: { host: '127.0.0.1', port },
    routes: [{
      location: '/mcp',
      server: { name: 'ws-credentials', version: '1.0.0' },
      read_timeout: 10,
      auth: { jwt: { issuer: as.issuer, audience: GATEWAY_AUDIENCE } },
      upstreams: [{ name: 'notes', url: upstream.url, auth: { token_exchange: { token_url: `${as.issuer}/token`, client_id: GATEWAY_CLIENT, client_secret: as.secret(GATEWAY_CLIENT), audience: NOTES } } }],
      prefix: 'always',
    }],
  }, '<test>')
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())

  const tokens: string[] = []
  for (const name of ['alice', 'bob']) {
    const token = await as.callerToken(name)
    tokens.push(token)
    const client = new Client({ name, version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    t.teardown(() => client.close())
    for (let round = 0; round < 3; round++) t.match(whoami(await client.callTool({ name: 'notes__whoami' })), { sub: name, aud: NOTES }, `${name}: the upstream connection speaks for ${name}`)
  }
  const authorised = upstream.handshakes.filter((headers) => typeof headers.authorization === 'string')
  t.equal(authorised.length, 2, 'one authorised connection per principal (the probe speaks for no one)')
  t.equal(as.hits.get(`${EXCHANGE_GRANT}|${NOTES}`), 2, 'one exchange per principal')
  const seen = JSON.stringify(upstream.handshakes)
  for (const token of tokens) t.notOk(seen.includes(token), "no caller's token in a handshake")
})
