/**
 * Hostile or careless input around the config (issue 16, rows 11, 14, 15): a YAML alias bomb, a
 * nested `${A:-${B}}`, a short requestState key from the environment, a Redis store without a
 * shared key; and duplicate Host headers on the wire.
 */
import { Writable } from 'node:stream'
import { connect } from 'node:net'
import t from 'tap'
import { pino } from 'pino'
import { ConfigError, configFromObject, loadConfig } from '../../gateway/config/load.ts'
import { buildGateway } from '../../gateway/server/server.ts'
import { HANDLER, socketGateway } from '../fixtures/transport-gateway.ts'
import { startRedis } from '../store/redis-server.ts'
import { writeConfig } from './write-config.ts'

/** A "billion laughs" under a route's free-form options: `levels` levels of 9 aliases each. */
function aliasBomb(levels: number): string {
  const names = 'abcdefghijklmnop'
  const lines = [`      ${names[0]}: &${names[0]} ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`]
  for (let level = 1; level < levels; level++) {
    const previous = `*${names[level - 1]}`
    lines.push(`      ${names[level]}: &${names[level]} [${Array(9).fill(previous).join(',')}]`)
  }
  return `routes:
  - location: /mcp
    handler: ./echo.ts
    server: { name: echo, version: 1.0.0 }
    options:
${lines.join('\n')}
`
}

async function loadError(file: string, env: Record<string, string> = {}): Promise<ConfigError> {
  const error = await loadConfig(file, env).then(() => new Error('the config loaded'), (e: unknown) => e)
  if (!(error instanceof ConfigError)) throw error
  return error
}

t.test('a YAML alias bomb is refused at once, with a clear error', async (t) => {
  const bomb = aliasBomb(9)
  t.ok(bomb.length < 800, `${bomb.length} bytes`)
  const started = performance.now()
  const error = await loadError(writeConfig(t, bomb))
  const ms = performance.now() - started
  t.match(error.message, /aliases|nodes/, error.message)
  t.ok(ms < 2000, `refused in ${ms.toFixed(0)} ms`)

  const smaller = await loadError(writeConfig(t, aliasBomb(6)))
  t.match(smaller.message, /more than 100000 values.*MCP_EDGE_CONFIG_MAX_NODES/, 'half a million values after expansion: over the size bound')
  const raised = await loadConfig(writeConfig(t, aliasBomb(4)), {}).catch((e: Error) => e)
  t.notOk(raised instanceof Error, `a few aliases are fine: ${String(raised)}`)
  const strict = await loadError(writeConfig(t, aliasBomb(4)), { MCP_EDGE_CONFIG_MAX_ALIASES: '5' })
  t.match(strict.message, /aliases.*MCP_EDGE_CONFIG_MAX_ALIASES/, 'the alias count is bounded too, and configurable')
})

t.test('a nested ${A:-${B}} is an error naming the variable', async (t) => {
  const doc = { log: { level: '${LEVEL:-${FALLBACK}}' }, routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'n', version: '1' } }] }
  const error = (() => {
    try {
      configFromObject(doc, '<test>', { FALLBACK: 'warn' })
      return undefined
    } catch (e) {
      return e as Error
    }
  })()
  t.ok(error instanceof ConfigError, 'refused, not a wrong value')
  t.match(error?.message, /LEVEL/, 'names the variable')
  t.match(error?.message, /nested/, 'says what is wrong')
})

t.test('MCP_EDGE_REQUEST_STATE_KEY must have 16 characters, like request_state.key', async (t) => {
  const doc = { routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'n', version: '1' } }] }
  t.throws(() => configFromObject(doc, '<test>', { MCP_EDGE_REQUEST_STATE_KEY: 'a' }), { name: 'ConfigError', message: /MCP_EDGE_REQUEST_STATE_KEY.*16/ })
  t.doesNotThrow(() => configFromObject(doc, '<test>', { MCP_EDGE_REQUEST_STATE_KEY: 'sixteen-chars-ok' }))
  t.doesNotThrow(() => configFromObject({ ...doc, request_state: { key: 'a-key-of-the-config-1' } }, '<test>', { MCP_EDGE_REQUEST_STATE_KEY: 'a' }), 'the config key wins; the variable is not used')
})

t.test('the redis store without a shared requestState key warns at start', async (t) => {
  const redis = await startRedis(t)
  const warnings = async (env: Record<string, string>, extra: object = {}) => {
    const lines: Array<{ level: number; msg: string }> = []
    const sink = new Writable({ write(chunk: Buffer, _e, done) { for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l)); done() } })
    const doc = { store: { type: 'redis', url: redis.url }, routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'n', version: '1' } }], ...extra }
    const gateway = await buildGateway(configFromObject(doc, '<test>', env), { logger: pino({ level: 'info' }, sink) })
    await gateway.close()
    return lines.filter((line) => line.level === 40 && /request_state/.test(line.msg))
  }
  t.equal((await warnings({})).length, 1, 'no key anywhere: one warning')
  t.equal((await warnings({ MCP_EDGE_REQUEST_STATE_KEY: 'sixteen-chars-ok' })).length, 0, 'a key from the environment: none')
  t.equal((await warnings({}, { request_state: { key: 'a-key-of-the-config-1' } })).length, 0, 'a key in the config: none')
})

/** Sends raw HTTP/1.1 and returns the status line and body. */
function rawRequest(port: number, text: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text))
    let data = ''
    socket.on('data', (chunk) => (data += chunk.toString()))
    socket.on('error', reject)
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1]), body: data.slice(data.indexOf('\r\n\r\n') + 4) }))
  })
}

t.test('duplicate Host headers are refused with 400', async (t) => {
  const gateway = await socketGateway(t)
  const port = Number(new URL(gateway.url).port)
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } })
  const request = (hosts: string[]) => [
    'POST /mcp HTTP/1.1',
    ...hosts.map((host) => `Host: ${host}`),
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n')
  const twice = await rawRequest(port, request([`127.0.0.1:${port}`, 'evil.example']))
  t.equal(twice.status, 400, 'two Host headers: 400')
  t.match(JSON.parse(twice.body), { jsonrpc: '2.0', id: null, error: { code: -32000, message: /Host/ } })
  const once = await rawRequest(port, request([`127.0.0.1:${port}`]))
  t.equal(once.status, 200, 'one Host header: served')
})
