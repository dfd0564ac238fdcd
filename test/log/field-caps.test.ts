/**
 * A log line's length does not follow the client (issue 26: a 1 MB method name gave a 1,000,142-byte
 * access line). Each client-chosen field is cut to LOG_FIELD_MAX characters (a URL to LOG_URL_MAX)
 * with a marker, on the hot path's access line and on Fastify's alike, and on every line pino writes
 * (a handler's failure with the client's request id, a failing request's URL).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { LOG_FIELD_MAX, LOG_URL_MAX } from '../../gateway/log/field-cap.ts'
import { createLogger, flushLogger } from '../../gateway/log/logger.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { ACCEPT_BOTH, HANDLER, VERSION } from '../fixtures/transport-gateway.ts'

t.setTimeout(120_000)
const dir = await mkdtemp(path.join(tmpdir(), 'mcp-edge-field-caps-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
const HEADERS = { accept: ACCEPT_BOTH, 'content-type': 'application/json', 'mcp-protocol-version': VERSION }
const HUGE = 1024 * 1024

function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }))
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** A gateway logging to a file; `trust_proxy` turns the hot path off, so the request takes Fastify's. */
async function loggingGateway(t: Test, name: string, top: object) {
  const file = path.join(dir, `${name}.log`)
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 }, log: { level: 'info' }, ...top,
    routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'transport', version: '1.0.0' } }],
  }, '<test>')
  const gateway = await startGateway(config, { logger: createLogger(config.log, { dest: file }) })
  t.teardown(() => gateway.close())
  return { gateway, url: `${gateway.url}/mcp`, read: async () => { await flushLogger(gateway.logger); return (await readFile(file, 'utf8')).split('\n').filter(Boolean) } }
}

for (const [path, top] of [['the hot path', {}], ['Fastify', { trust_proxy: true }]] as const) {
  t.test(`${path}: a megabyte method name makes a line of bounded length`, async (t) => {
    const { gateway, url, read } = await loggingGateway(t, path.replace(/\W/g, ''), top)
    const init = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'caps', version: '1' } } }), HEADERS)
    const session = init.headers['mcp-session-id'] as string
    const before = gateway.hotPosts.served
    const method = `m${'x'.repeat(HUGE)}`
    const unknown = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method }), { ...HEADERS, 'mcp-session-id': session })
    t.equal(unknown.status, 200)
    t.match(unknown.body, /-32601/, 'the unknown method is answered as such')
    t.equal(gateway.hotPosts.served - before, path === 'the hot path' ? 1 : 0, `served by ${path}`)
    const lines = await read()
    const longest = Math.max(...lines.map((line) => Buffer.byteLength(line)))
    t.ok(longest < 8 * 1024, `every line under 8 KiB (the longest: ${longest} bytes)`)
    const access = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => typeof line.method === 'string' && line.method.startsWith('mx'))
    t.ok(access, 'the unknown method has its access line')
    t.equal(access?.method, `m${'x'.repeat(LOG_FIELD_MAX - 1)}…(+${HUGE + 1 - LOG_FIELD_MAX} chars)`, 'the method cut to its first characters, with how many were left out')
  })
}

t.test('every pino line caps the client-chosen fields and the URL', async (t) => {
  const file = path.join(dir, 'pino.log')
  const logger = createLogger({ level: 'info', buffer: 0 }, { dest: file })
  const long = 'p'.repeat(HUGE)
  logger.info({ url: `/mcp?token=secret&q=${long}`, principal: long, method: long, reason: long, requestId: long, tool: 'short' }, 'request failed')
  const [line] = (await readFile(file, 'utf8')).split('\n')
  t.ok(Buffer.byteLength(line!) < LOG_URL_MAX + 6 * LOG_FIELD_MAX, `one bounded line (${Buffer.byteLength(line!)} bytes)`)
  const fields = JSON.parse(line!) as Record<string, string>
  t.match(fields.url, /^\/mcp\?token=\[Redacted\]&q=p+…\(\+\d+ chars\)$/, 'the URL redacted, then cut')
  t.equal(fields.url!.indexOf('…'), LOG_URL_MAX)
  for (const name of ['principal', 'method', 'reason', 'requestId']) t.equal(fields[name]!.indexOf('…'), LOG_FIELD_MAX, `${name} cut at ${LOG_FIELD_MAX}`)
  t.equal(fields.tool, 'short', 'a short field is written as it is')
})
