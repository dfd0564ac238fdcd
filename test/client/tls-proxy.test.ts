/**
 * The HTTP and WebSocket clients' TLS options (ca, cert, key, rejectUnauthorized) and HTTP proxy:
 * a real gateway on loopback behind a TLS front (node:tls with a self-signed certificate made here by
 * openssl, optionally asking for a client certificate), and a CONNECT proxy started by the test that
 * records what it tunnels and wants credentials.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tls from 'node:tls'
import t, { type Test } from 'tap'
import { McpClient, StreamableHttpTransport, TransportError, WebSocketTransport, type Transport } from '../../gateway/client/index.ts'
import { gatewayWith, liveRoute } from './harness.ts'

/** A self-signed certificate for 127.0.0.1 and localhost, and its key (PEM). */
function selfSigned(dir: string, name: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`)
  const cert = join(dir, `${name}.crt`)
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', `/CN=${name}`,
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', cert], { stdio: 'ignore' })
  return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') }
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-edge-tls-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const server = selfSigned(dir, 'server')
const client = selfSigned(dir, 'client')

/** TLS in front of `port`: each connection decrypted and piped to the gateway. */
async function tlsFront(t: Test, port: number, options: tls.TlsOptions = {}): Promise<number> {
  const front = tls.createServer({ cert: server.cert, key: server.key, ...options }, (socket) => {
    const upstream = net.connect(port, '127.0.0.1')
    socket.pipe(upstream).pipe(socket)
    socket.on('error', () => upstream.destroy())
    upstream.on('error', () => socket.destroy())
  })
  front.on('tlsClientError', () => undefined)
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => { front.close(resolve); for (const socket of sockets) socket.destroy() }))
  const sockets = new Set<net.Socket>()
  front.on('secureConnection', (socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)) })
  return (front.address() as net.AddressInfo).port
}

/** A CONNECT proxy that wants `user:secret` and records the targets it tunnelled to. */
async function connectProxy(t: Test): Promise<{ url: string; tunnels: string[] }> {
  const tunnels: string[] = []
  const sockets = new Set<net.Socket>()
  const proxy = http.createServer((_request, response) => response.writeHead(405).end())
  proxy.on('connect', (request: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    sockets.add(socket)
    if (request.headers['proxy-authorization'] !== `Basic ${Buffer.from('user:secret').toString('base64')}`) {
      socket.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n')
      return
    }
    tunnels.push(request.url ?? '')
    const [host, port] = (request.url ?? '').split(':')
    const upstream = net.connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      upstream.write(head)
      socket.pipe(upstream).pipe(socket)
    })
    socket.on('error', () => upstream.destroy())
    upstream.on('error', () => socket.destroy())
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => { for (const socket of sockets) socket.destroy(); proxy.close(resolve) }))
  return { url: `http://user:secret@127.0.0.1:${(proxy.address() as net.AddressInfo).port}`, tunnels }
}

/** Initializes, calls a tool, closes; the tool's text. */
async function roundTrip(transport: Transport): Promise<string> {
  const mcp = new McpClient(transport)
  try {
    await mcp.initialize()
    const result = await mcp.callTool('touch')
    return (result.content[0] as { text: string }).text
  } finally {
    await mcp.close().catch(() => undefined)
  }
}

const ROUTE = { ...liveRoute, transports: ['streamable_http', 'websocket'] }

t.test('https and wss: a private CA, the check on by default, rejectUnauthorized false', async (t) => {
  const gateway = await gatewayWith(t, [ROUTE])
  const port = await tlsFront(t, Number(new URL(gateway.url).port))
  const https = `https://127.0.0.1:${port}/live`
  const wss = `wss://127.0.0.1:${port}/live`
  t.match(await roundTrip(new StreamableHttpTransport({ url: https, tls: { ca: server.cert } })), /^counter is \d+$/, 'https with the CA')
  t.match(await roundTrip(new WebSocketTransport({ url: wss, tls: { ca: server.cert } })), /^counter is \d+$/, 'wss with the CA')
  await t.rejects(roundTrip(new StreamableHttpTransport({ url: https, tls: {} })), TransportError, 'https: a self-signed certificate is refused')
  await t.rejects(roundTrip(new WebSocketTransport({ url: wss })), TransportError, 'wss: refused too')
  t.match(await roundTrip(new StreamableHttpTransport({ url: https, tls: { rejectUnauthorized: false } })), /^counter is/, 'unless told not to check')
})

t.test('a client certificate (cert, key) for a server that asks for one', async (t) => {
  const gateway = await gatewayWith(t, [ROUTE])
  const port = await tlsFront(t, Number(new URL(gateway.url).port), { requestCert: true, rejectUnauthorized: true, ca: client.cert })
  const https = `https://127.0.0.1:${port}/live`
  t.match(await roundTrip(new StreamableHttpTransport({ url: https, tls: { ca: server.cert, cert: client.cert, key: client.key } })), /^counter is/)
  t.match(await roundTrip(new WebSocketTransport({ url: `wss://127.0.0.1:${port}/live`, tls: { ca: server.cert, cert: client.cert, key: client.key } })), /^counter is/)
  await t.rejects(roundTrip(new StreamableHttpTransport({ url: https, tls: { ca: server.cert } })), TransportError, 'without one: refused')
})

t.test('an HTTP proxy with credentials, for http, https, ws and wss', async (t) => {
  const gateway = await gatewayWith(t, [ROUTE])
  const plainPort = Number(new URL(gateway.url).port)
  const tlsPort = await tlsFront(t, plainPort)
  const proxy = await connectProxy(t)
  t.match(await roundTrip(new StreamableHttpTransport({ url: `${gateway.url}/live`, proxy: proxy.url })), /^counter is/, 'http through the proxy')
  t.match(await roundTrip(new StreamableHttpTransport({ url: `https://127.0.0.1:${tlsPort}/live`, proxy: proxy.url, tls: { ca: server.cert } })), /^counter is/, 'https through the proxy')
  t.match(await roundTrip(new WebSocketTransport({ url: `${gateway.url.replace('http', 'ws')}/live`, proxy: proxy.url })), /^counter is/, 'ws through the proxy')
  t.match(await roundTrip(new WebSocketTransport({ url: `wss://127.0.0.1:${tlsPort}/live`, proxy: proxy.url, tls: { ca: server.cert } })), /^counter is/, 'wss through the proxy')
  t.ok(proxy.tunnels.includes(`127.0.0.1:${plainPort}`) && proxy.tunnels.includes(`127.0.0.1:${tlsPort}`), 'every connection went through the proxy', { tunnels: proxy.tunnels })
  const wrong = proxy.url.replace('secret', 'wrong')
  await t.rejects(roundTrip(new StreamableHttpTransport({ url: `${gateway.url}/live`, proxy: wrong })), { message: /HTTP 407/ }, 'wrong credentials: the proxy says 407')
})
