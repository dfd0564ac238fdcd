/**
 * Mutual TLS to upstreams (`tls: {ca, cert, key, servername}`), HTTP and WebSocket: a private CA (made
 * with openssl), an https SDK upstream and a wss SDK upstream that both demand a client certificate
 * signed by it, reached on 127.0.0.1 under the name `upstream.test` (servername). The gateway's client
 * certificate gets it in; an upstream configured without one is refused at the handshake. The caller's
 * own Authorization header never travels upstream.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { freePort } from '../fixtures/waiting.ts'
import { startRecordingUpstream, whoami } from './fixtures/recording-upstream.ts'
import { startWsUpstream } from './fixtures/ws-upstream.ts'

t.setTimeout(120_000)

/** A CA, a server certificate for `upstream.test`, and a client certificate, as PEM files in `folder`. */
function makeCertificates(folder: string): Record<'ca' | 'serverKey' | 'serverCert' | 'clientKey' | 'clientCert', string> {
  const file = (name: string): string => path.join(folder, name)
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { stdio: 'ignore' })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '1', '-subj', '/CN=mcp-edge test CA')
  for (const [name, subject, extension] of [['server', '/CN=upstream.test', 'subjectAltName=DNS:upstream.test'], ['client', '/CN=mcp-edge-gateway', 'extendedKeyUsage=clientAuth']] as const) {
    writeFileSync(file(`${name}.ext`), `${extension}\n`)
    openssl('req', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject)
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file(`${name}.pem`), '-days', '1', '-extfile', file(`${name}.ext`))
  }
  return { ca: file('ca.pem'), serverKey: file('server.key'), serverCert: file('server.pem'), clientKey: file('client.key'), clientCert: file('client.pem') }
}

t.test('a client certificate per upstream over https and wss; none, no way in', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-mtls-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const files = makeCertificates(folder)
  const serverTls = { key: readFileSync(files.serverKey), cert: readFileSync(files.serverCert), ca: readFileSync(files.ca) }
  const https = await startRecordingUpstream(t, async () => ({ sub: 'mtls' }), { tls: { ...serverTls, requestCert: true, rejectUnauthorized: true } })
  const wssUpstream = await startWsUpstream(t, { tls: serverTls })
  const wss = wssUpstream.url
  const wssHeaders = wssUpstream.handshakes
  const port = await freePort()
  const tls = { ca: files.ca, cert: files.clientCert, key: files.clientKey, servername: 'upstream.test' }
  const config = configFromObject({
    listen: { host: '127.0.0.1', port },
    routes: [{
      location: '/mcp',
      server: { name: 'mtls', version: '1.0.0' },
      read_timeout: 10,
      upstreams: [
        { name: 'https', url: https.url, tls },
        { name: 'wss', url: wss, tls },
        { name: 'nocert', url: https.url, tls: { ca: files.ca, servername: 'upstream.test' }, health_interval: 60 },
      ],
      prefix: 'always',
    }],
  }, path.join(folder, 'gateway.yaml'))
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())

  const callerToken = `caller-token-${crypto.randomUUID()}`
  const client = new Client({ name: 'mtls', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${callerToken}` } } }))
  t.teardown(() => client.close())

  t.equal(whoami(await client.callTool({ name: 'https__whoami' })).sub, 'mtls', 'the https upstream let the gateway in with its certificate')
  t.equal(whoami(await client.callTool({ name: 'wss__whoami' })).sub, 'cert:mcp-edge-gateway', 'the wss upstream saw the gateway client certificate')
  const refused = await client.callTool({ name: 'nocert__whoami' })
  t.equal(refused.isError, true, 'without a client certificate the upstream cannot be reached')
  t.match((refused.content as Array<{ text: string }>)[0]!.text, /"nocert"/, 'the error names the upstream')
  t.notOk(JSON.stringify([https.log, wssHeaders]).includes(callerToken), "the caller's token reached neither upstream")
})
