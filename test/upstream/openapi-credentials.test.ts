/**
 * `openapi:` upstreams through the upstream-identity seam: oidc-provider as the authorization server,
 * a REST API (Fastify) that verifies a JWT on every request with jose against the server's JWKS, one
 * proxy route behind JWT auth with the official SDK client as two callers. One upstream exchanges
 * each caller's token (RFC 8693) for one the API accepts, one uses the gateway's client credentials.
 *
 * Proved: the API sees each caller (sub) through the exchange, acted by the gateway, and the gateway
 * alone through client credentials; one exchange per principal, one client-credentials token for all;
 * alice's exchanged token never serves bob's call; no caller's token ever reaches the API.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import Fastify from 'fastify'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import t from 'tap'
import { gatewayWith } from '../e2e/harness.ts'
import { EXCHANGE_GRANT, GATEWAY_AUDIENCE, GATEWAY_CLIENT, startAuthorizationServer } from './fixtures/credentials-as.ts'

t.setTimeout(90_000)

const TX_AUDIENCE = 'urn:rest:notes'
const CC_AUDIENCE = 'urn:rest:reports'

t.test('token exchange and client credentials toward a REST API; no caller token reaches it', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-openapi-credentials-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const as = await startAuthorizationServer(t, ['alice', 'bob'], [TX_AUDIENCE, CC_AUDIENCE])
  const jwks = createRemoteJWKSet(new URL(as.jwksUrl))

  const received: string[] = []
  const api = Fastify()
  api.addHook('onRequest', async (request) => void received.push(JSON.stringify(request.headers)))
  for (const [route, audience] of [['/notes/whoami', TX_AUDIENCE], ['/reports/whoami', CC_AUDIENCE]] as const) {
    api.get(route, async (request, reply) => {
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
      if (token === undefined) return reply.code(401).send({ error: 'no token' })
      try {
        const { payload } = await jwtVerify(token, jwks, { issuer: as.issuer, audience })
        return { sub: payload.sub, aud: payload.aud, act: (payload.act as { sub?: string } | undefined)?.sub ?? '' }
      } catch (error) {
        return reply.code(401).send({ error: (error as Error).message })
      }
    })
  }
  await api.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => api.close())
  const origin = `http://127.0.0.1:${(api.server.address() as { port: number }).port}`
  const whoami = { type: 'object', properties: { sub: { type: 'string' }, aud: {}, act: { type: 'string' } } }
  const document = path.join(folder, 'api.json')
  writeFileSync(document, JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'REST', version: '1.0.0' },
    servers: [{ url: origin }],
    paths: Object.fromEntries(['notes', 'reports'].map((area) => [`/${area}/whoami`, {
      get: { operationId: `${area}WhoAmI`, responses: { 200: { description: 'who the API sees', content: { 'application/json': { schema: whoami } } }, 401: { description: 'refused' } } },
    }])),
  }))

  const tokenUrl = `${as.issuer}/token`
  const gateway = await gatewayWith(t, [{
    location: '/rest',
    server: { name: 'rest', version: '1.0.0' },
    auth: { jwt: { issuer: as.issuer, audience: GATEWAY_AUDIENCE } },
    upstreams: [
      { name: 'tx', auth: { token_exchange: { token_url: tokenUrl, client_id: GATEWAY_CLIENT, client_secret: as.secret(GATEWAY_CLIENT), audience: TX_AUDIENCE, scope: 'notes:read' } }, openapi: { document, operations: ['notesWhoAmI'] } },
      { name: 'cc', auth: { client_credentials: { token_url: tokenUrl, client_id: GATEWAY_CLIENT, client_secret: as.secret(GATEWAY_CLIENT), resource: CC_AUDIENCE, scope: 'mcp' } }, openapi: { document, operations: ['reportsWhoAmI'] } },
    ],
  }])

  const callers = new Map<string, { client: Client; token: string }>()
  for (const name of ['alice', 'bob']) {
    const token = await as.callerToken(name)
    const client = new Client({ name: `caller-${name}`, version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/rest`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    t.teardown(() => client.close())
    callers.set(name, { client, token })
  }
  t.same((await callers.get('alice')!.client.listTools()).tools.map((tool) => tool.name).sort(), ['cc__reportsWhoAmI', 'tx__notesWhoAmI'])

  // Interleaved, so a token held for one principal would show in the other's answer.
  for (let round = 0; round < 2; round++) {
    for (const [name, { client }] of callers) {
      const tx = await client.callTool({ name: 'tx__notesWhoAmI', arguments: {} })
      t.notOk(tx.isError, `${name}: ${JSON.stringify(tx.content)}`)
      t.same(tx.structuredContent, { sub: name, aud: TX_AUDIENCE, act: GATEWAY_CLIENT }, `${name}: the API sees the caller, through an exchanged token acted by the gateway`)
      const cc = await client.callTool({ name: 'cc__reportsWhoAmI', arguments: {} })
      t.match(cc.structuredContent, { sub: GATEWAY_CLIENT }, `${name}: client credentials: the API sees the gateway`)
    }
  }
  t.equal(as.hits.get(`${EXCHANGE_GRANT}|${TX_AUDIENCE}`), 2, 'one exchange per principal while valid')
  t.equal(as.hits.get(`client_credentials|${CC_AUDIENCE}`), 1, 'one client-credentials token for every caller')
  t.equal(received.length, 8, 'every call reached the API')
  for (const [name, { token }] of callers) t.notOk(received.some((headers) => headers.includes(token)), `${name}'s own token never reached the API`)
})
