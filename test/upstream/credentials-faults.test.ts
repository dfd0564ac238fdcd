/**
 * Upstream credentials when their authorization server or the upstream's keys misbehave: the server
 * down, slow (bounded by the kind's `timeout`), answering garbage, refusing the exchange with its own
 * `error` code; an upstream whose JWKS lacks the gateway's key. Each call fails cleanly with an error
 * naming the upstream and the reason (never a secret), the upstreams stay up in /readyz, and a healthy
 * upstream on the same route keeps answering: nothing else is lost.
 */
import { generateKeyPairSync } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { exportJWK, generateKeyPair } from 'jose'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { freePort } from '../fixtures/waiting.ts'
import { GATEWAY_AUDIENCE, GATEWAY_CLIENT, startAuthorizationServer } from './fixtures/credentials-as.ts'
import { jwtCheck, startRecordingUpstream, whoami } from './fixtures/recording-upstream.ts'

t.setTimeout(120_000)

const NOTES = 'urn:upstream:notes'

/** An HTTP server answering every request with `answer` (or never, for `hang`). */
async function fakeServer(t: Test, answer: 'hang' | { status: number; body: string; type: string }): Promise<string> {
  const server: Server = createServer((request, response) => {
    request.resume()
    if (answer === 'hang') return
    response.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

t.test('authorization server faults and a JWKS without the key: clean errors naming the upstream, nothing else lost', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-credential-faults-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const as = await startAuthorizationServer(t, ['alice'], [NOTES])
  const secret = as.secret(GATEWAY_CLIENT)
  const port = await freePort()
  const gatewayUrl = `http://127.0.0.1:${port}`
  const down = `http://127.0.0.1:${await freePort()}`
  const slow = await fakeServer(t, 'hang')
  const garbage = await fakeServer(t, { status: 200, body: '<html>not a token</html>', type: 'text/html' })
  const huge = await fakeServer(t, { status: 200, body: JSON.stringify({ access_token: 'x'.repeat(200_000), token_type: 'Bearer' }), type: 'application/json' })
  // A JWKS with some other key: the upstream cannot verify the gateway's assertions.
  const { publicKey: stranger } = await generateKeyPair('ES256', { extractable: true })
  const wrongJwks = await fakeServer(t, { status: 200, body: JSON.stringify({ keys: [{ ...(await exportJWK(stranger)), kid: 'k1', alg: 'ES256' }] }), type: 'application/json' })
  const keyFile = path.join(folder, 'k1.pem')
  writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }))

  const notes = await startRecordingUpstream(t, jwtCheck(as.jwksUrl, as.issuer, NOTES))
  const internal = await startRecordingUpstream(t, jwtCheck(`${wrongJwks}/jwks`, 'https://gateway.test', 'urn:upstream:internal'))
  const exchange = (tokenUrl: string, audience = NOTES) => ({ token_exchange: { token_url: tokenUrl, client_id: GATEWAY_CLIENT, client_secret: secret, audience, timeout: 1 } })
  const config = configFromObject({
    listen: { host: '127.0.0.1', port },
    upstream_identity: { issuer: 'https://gateway.test', keys: [{ kid: 'k1', file: keyFile }] },
    routes: [{
      location: '/mcp',
      server: { name: 'faults', version: '1.0.0' },
      read_timeout: 10,
      auth: { jwt: { issuer: as.issuer, audience: GATEWAY_AUDIENCE } },
      upstreams: [
        { name: 'good', url: notes.url, auth: exchange(`${as.issuer}/token`) },
        { name: 'down', url: notes.url, auth: exchange(`${down}/token`) },
        { name: 'slow', url: notes.url, auth: exchange(`${slow}/token`) },
        { name: 'garbage', url: notes.url, auth: exchange(`${garbage}/token`) },
        { name: 'huge', url: notes.url, auth: { client_credentials: { token_url: `${huge}/token`, client_id: GATEWAY_CLIENT, client_secret: secret, timeout: 1 } } },
        { name: 'refused', url: notes.url, auth: exchange(`${as.issuer}/token`, 'urn:upstream:unknown') },
        { name: 'nokey', url: internal.url, auth: { identity_assertion: { audience: 'urn:upstream:internal' } } },
      ],
      prefix: 'always',
    }],
  }, path.join(folder, 'gateway.yaml'))
  const lines: string[] = []
  const logger = pino({ level: 'debug' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }))
  const gateway = await startGateway(config, { logger })
  t.teardown(() => gateway.close())

  const token = await as.callerToken('alice')
  const client = new Client({ name: 'faults', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  t.teardown(() => client.close())

  const listed = await client.listTools()
  t.same(listed.tools.map((tool) => tool.name), ['good__whoami'], 'the list carries the upstream whose credential works')
  t.same((listed._meta?.['mcp-edge/unavailable'] as string[] | undefined)?.sort(), ['down', 'garbage', 'huge', 'nokey', 'refused', 'slow'], 'and names the others')

  const expected: Record<string, RegExp> = {
    down: /^Upstream "down": the gateway could not authenticate to it \(unreachable\)/,
    slow: /^Upstream "slow": the gateway could not authenticate to it \(timeout\): the authorization server did not answer within 1000 ms/,
    garbage: /^Upstream "garbage": the gateway could not authenticate to it \(invalid_response\)/,
    huge: /^Upstream "huge": the gateway could not authenticate to it \(invalid_response\): the authorization server's answer is over 65536 bytes/,
    refused: /^Upstream "refused": the gateway could not authenticate to it \(invalid_target\)/,
    nokey: /^Upstream "nokey": the gateway could not authenticate to it \(rejected\): it refused the gateway's credential \(HTTP 401\)/,
  }
  for (const [name, pattern] of Object.entries(expected)) {
    const started = Date.now()
    const refusedBefore = internal.log.filter((entry) => entry.status === 401).length
    const result = await client.callTool({ name: `${name}__whoami` })
    if (name === 'nokey') t.equal(internal.log.filter((entry) => entry.status === 401).length - refusedBefore, 2, 'the refused assertion was signed anew and tried once more, no more')
    t.equal(result.isError, true, `${name}: the call fails`)
    t.match(text(result), pattern, `${name}: the error names the upstream and the reason`)
    t.notOk(text(result).includes(secret), `${name}: no secret in the error`)
    if (name === 'slow') t.ok(Date.now() - started < 5000, 'a slow authorization server is bounded by the timeout')
    t.equal(whoami(await client.callTool({ name: 'good__whoami' })).sub, 'alice', `after ${name}: the healthy upstream still answers`)
  }

  const ready = (await (await fetch(`${gatewayUrl}/readyz`)).json()) as { upstreams: Record<string, Record<string, { state: string }>> }
  for (const name of Object.keys(expected)) t.equal(ready.upstreams['/mcp']?.[name]?.state, 'up', `${name}: not marked down for everyone`)
  const logged = lines.join('')
  for (const value of [token, secret]) t.notOk(logged.includes(value), 'no token or secret in the gateway log')
})
