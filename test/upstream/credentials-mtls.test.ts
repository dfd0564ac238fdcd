/**
 * Mutual TLS to upstreams (`tls: {ca, cert, key, servername}`), HTTP and WebSocket: a private CA (made
 * with openssl), an https SDK upstream and a wss SDK upstream that both demand a client certificate
 * signed by it, reached on 127.0.0.1 under the name `upstream.test` (servername). The gateway's client
 * certificate gets it in; an upstream configured without one is refused at the handshake. The caller's
 * own Authorization header never travels upstream.
 */
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { TLSSocket } from 'node:tls'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import t, { type Test } from 'tap'
import { WebSocketServer } from 'ws'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { freePort } from '../fixtures/waiting.ts'
import { startRecordingUpstream, whoami } from './fixtures/recording-upstream.ts'

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

/** A wss MCP upstream (the SDK's McpServer on each connection) demanding a client certificate; `whoami` names the certificate. */
async function startWssUpstream(t: Test, tls: { key: Buffer; cert: Buffer; ca: Buffer }, headers: Array<Record<string, unknown>>): Promise<string> {
  const server = createServer({ ...tls, requestCert: true, rejectUnauthorized: true })
  const wss = new WebSocketServer({ server, handleProtocols: (offered) => (offered.has('mcp') ? 'mcp' : false) })
  wss.on('connection', (socket, request) => {
    headers.push({ ...request.headers })
    const peer = (request.socket as TLSSocket).getPeerCertificate().subject?.CN
    const transport: Transport = {
      start: async () => undefined,
      send: async (message: JSONRPCMessage) => void socket.send(JSON.stringify(message)),
      close: async () => socket.close(),
    }
    socket.on('message', (data) => transport.onmessage?.(JSON.parse(String(data)) as JSONRPCMessage))
    socket.on('close', () => transport.onclose?.())
    const mcp = new McpServer({ name: 'wss-upstream', version: '1.0.0' })
    mcp.registerTool('whoami', {}, async () => ({ content: [{ type: 'text', text: JSON.stringify({ sub: `cert:${String(peer)}` }) }] }))
    void mcp.connect(transport)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => {
    for (const client of wss.clients) client.terminate()
    wss.close()
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return `wss://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

t.test('a client certificate per upstream over https and wss; none, no way in', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-mtls-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const files = makeCertificates(folder)
  const serverTls = { key: readFileSync(files.serverKey), cert: readFileSync(files.serverCert), ca: readFileSync(files.ca) }
  const https = await startRecordingUpstream(t, async () => ({ sub: 'mtls' }), { tls: { ...serverTls, requestCert: true, rejectUnauthorized: true } })
  const wssHeaders: Array<Record<string, unknown>> = []
  const wss = await startWssUpstream(t, serverTls, wssHeaders)
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
