/**
 * Secrets never reach the log (issue 16, row 13), read back from the log file the gateway's own logger
 * wrote: a 500 on a URL with `?token=…`, credential headers on a logged request, session ids.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { createLogger, flushLogger } from '../../gateway/log/logger.ts'
import { redactUrl, sessionHash } from '../../gateway/log/redact.ts'
import { buildGateway } from '../../gateway/server/server.ts'

const ECHO = fileURLToPath(new URL('../../handlers/echo.ts', import.meta.url))
// Quick (seconds), but tap's default 30 s per file is short on a loaded CI machine.
t.setTimeout(120_000)
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const dir = await mkdtemp(path.join(tmpdir(), 'mcp-edge-redact-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

/** A gateway logging to a file through the production logger, with a route that fails as a bug would. */
async function gatewayLoggingTo(t: { teardown(fn: () => unknown): void }, name: string, log: object = {}) {
  const file = path.join(dir, `${name}.log`)
  const config = configFromObject({ log: { level: 'info', ...log }, routes: [{ location: '/mcp', handler: ECHO, server: { name: 'echo', version: '1.0.0' } }] }, '<test>')
  const gateway = await buildGateway(config, { logger: createLogger(config.log, { dest: file }) })
  gateway.app.get('/boom', (request) => {
    gateway.logger.info({ headers: request.headers }, 'about to fail')
    throw new Error('an unexpected bug')
  })
  t.teardown(() => gateway.close())
  return { gateway, read: async () => { await flushLogger(gateway.logger); return readFile(file, 'utf8') } }
}

t.test('a 500 on a URL with ?token=… logs neither the token nor the credential headers', async (t) => {
  const { gateway, read } = await gatewayLoggingTo(t, 'defaults')
  const response = await gateway.app.inject({
    method: 'GET',
    url: '/boom?token=s3cret-token&page=2&api_key=s3cret-key',
    headers: { authorization: 'Bearer s3cret-bearer', cookie: 'sid=s3cret-cookie', 'mcp-session-id': 's3cret-session', 'user-agent': 'redact-test' },
  })
  t.equal(response.statusCode, 500)
  const log = await read()
  t.notMatch(log, /s3cret/, 'no secret in the log')
  const failed = log.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg === 'request failed')
  t.equal(failed?.url, '/boom?token=[Redacted]&page=2&api_key=[Redacted]', 'the path and harmless parameters stay')
  t.match(log, /"authorization":"\[Redacted\]"/)
  t.match(log, /"cookie":"\[Redacted\]"/)
  t.match(log, /"mcp-session-id":"\[Redacted\]"/)
  t.match(log, /"user-agent":"redact-test"/, 'other headers stay')
})

t.test('a session is logged by a short hash of its id, on every line', async (t) => {
  const { gateway, read } = await gatewayLoggingTo(t, 'session')
  const init = await gateway.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: HEADERS,
    payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
  })
  const session = init.headers['mcp-session-id'] as string
  await gateway.app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'mcp-session-id': session }, payload: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } } })
  const deleted = await gateway.app.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } })
  t.equal(deleted.statusCode, 200, deleted.body)
  const log = await read()
  t.notMatch(log, session, 'the id is not in the log')
  const hash = sessionHash(session) as string
  t.match(hash, /^[0-9a-f]{12}$/)
  const lines = log.split('\n').filter((line) => line.includes(hash))
  t.ok(lines.some((line) => line.includes('"method":"tools/call"')), 'the access line carries the hash')
  t.ok(lines.some((line) => line.includes('session deleted')), 'so does the DELETE line')
})

t.test('what is redacted is configurable', async (t) => {
  const { gateway, read } = await gatewayLoggingTo(t, 'configured', { redact: { headers: ['X-Tenant'], query_params: ['ticket'], paths: ['note'] } })
  gateway.logger.info({ note: 'private' }, 'a note')
  await gateway.app.inject({ method: 'GET', url: '/boom?ticket=abc&token=visible', headers: { 'x-tenant': 'acme', authorization: 'Bearer visible' } })
  const log = await read()
  t.match(log, '"url":"/boom?ticket=[Redacted]&token=visible"')
  t.match(log, /"x-tenant":"\[Redacted\]"/, 'header names match case-insensitively')
  t.match(log, /"authorization":"Bearer visible"/, 'the list replaces the default')
  t.match(log, /"note":"\[Redacted\]"/)
})

t.test('redactUrl', async (t) => {
  const names = ['token', 'key']
  t.equal(redactUrl('/mcp', names), '/mcp')
  t.equal(redactUrl('/mcp?', names), '/mcp?')
  t.equal(redactUrl('/mcp?Access_Token=a&x=1&flag', names), '/mcp?Access_Token=[Redacted]&x=1&flag')
  t.equal(redactUrl('/mcp?api%5Fkey=a', names), '/mcp?api%5Fkey=[Redacted]', 'names are decoded before matching')
  t.equal(redactUrl(undefined, names), undefined)
})

t.test('the default list redacts the usual credential parameters, and the schema and the logger agree on it (issue 26)', async (t) => {
  const credentials = ['jwt', 'pass', 'passwd', 'password', 'pwd', 'bearer', 'refresh', 'refresh_token', 'otp', 'assertion', 'client_assertion', 'token',
    'access_token', 'id_token', 'code', 'secret', 'client_secret', 'key', 'api_key', 'apikey', 'signature', 'X-Amz-Signature', 'sig', 'session', 'auth', 'ticket']
  const { gateway, read } = await gatewayLoggingTo(t, 'usual-names')
  const url = `/boom?${credentials.map((name) => `${name}=s3cret-${name}`).join('&')}&page=2`
  await gateway.app.inject({ method: 'GET', url })
  const log = await read()
  t.notMatch(log, /s3cret/, 'no credential value from the configured defaults reaches the log')
  t.match(log, `"url":"/boom?${credentials.map((name) => `${name}=[Redacted]`).join('&')}&page=2"`, 'names stay, values go, harmless ones stay')
  // A logger built in code with only a level (tests, benchmarks, the stdio command) uses its own copy of the defaults.
  const file = path.join(dir, 'code-defaults.log')
  const logger = createLogger({ level: 'info' }, { dest: file })
  logger.info({ url }, 'line')
  await flushLogger(logger)
  t.notMatch(await readFile(file, 'utf8'), /s3cret/, 'the in-code defaults are the same list')
})
