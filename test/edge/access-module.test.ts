// The access phase a team writes: allow (its own identity), deny (any 4xx, per tool), add scopes to an
// API key's, and a throw that is a 403 with a reference, never a 500. Over HTTP and a WebSocket upgrade.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import t from 'tap'
import WebSocket from 'ws'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { call, initialize, INIT, post } from './fixtures/http.ts'

const ECHO = path.resolve('handlers/echo.ts')
const ACCESS = fileURLToPath(new URL('./fixtures/access.ts', import.meta.url))
const TOOLS_LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' }
const CALL_ECHO = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }
const CI_KEY = 'k-ci-0123456789abcdef'

const toolNames = async (response: Response): Promise<string[]> =>
  ((await response.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((tool) => tool.name)

t.test('the access module', async (t) => {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-keys-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const keys = path.join(folder, 'keys.yaml')
  writeFileSync(keys, `keys:\n  - sha256: ${createHash('sha256').update(CI_KEY).digest('hex')}\n    principal: ci\n    scopes: [mcp]\n`)
  const lines: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }))
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    auth: { api_keys: keys, access: ACCESS, required_scopes: ['mcp'] },
    scopes: { tools: { echo: ['echo.use'] } },
    routes: [{ location: '/mcp', handler: ECHO, server: { name: 'echo', version: '1.0.0' }, transports: ['streamable_http', 'websocket'] }],
  }, '<test>')
  const gateway = await startGateway(config, { logger })
  t.teardown(() => gateway.close())
  const url = `${gateway.url}/mcp`

  t.test('allow: the module names the principal and its scopes', async (t) => {
    const alice = { 'x-user': 'alice' }
    const session = await initialize(url, alice)
    t.same(await toolNames(await call(url, session, TOOLS_LIST, alice)), [], 'mcp only: echo is hidden')
    const bob = await call(url, session, TOOLS_LIST, { 'x-user': 'bob' })
    t.equal(bob.status, 404, "user:bob cannot use user:alice's session")
  })

  t.test('deny: the module’s status and message, per request and per tool', async (t) => {
    const banned = await post(url, INIT, { 'x-user': 'mallory' })
    t.equal(banned.status, 429)
    t.match(await banned.json(), { id: 1, error: { message: 'mallory is rate limited by policy' } })
    const eve = { 'x-user': 'eve' }
    const session = await initialize(url, eve)
    t.same(await toolNames(await call(url, session, TOOLS_LIST, eve)), ['echo'])
    const refused = await call(url, session, CALL_ECHO, eve)
    t.equal(refused.status, 403)
    t.match(await refused.json(), { id: 3, error: { message: 'no echo for eve' } })
  })

  t.test('add scopes: on top of an API key', async (t) => {
    const ci = { 'x-api-key': CI_KEY }
    const session = await initialize(url, ci)
    t.same(await toolNames(await call(url, session, TOOLS_LIST, ci)), [])
    t.equal((await call(url, session, CALL_ECHO, ci)).status, 403)
    const internal = { ...ci, 'x-internal': '1' }
    t.same(await toolNames(await call(url, session, TOOLS_LIST, internal)), ['echo'])
    t.equal((await call(url, session, CALL_ECHO, internal)).status, 200)
    const wrongKey = await post(url, INIT, { 'x-api-key': 'k-not-ours' })
    t.equal(wrongKey.status, 401)
    t.match(wrongKey.headers.get('www-authenticate'), /error="invalid_token"/)
  })

  t.test('nobody: 401', async (t) => {
    const response = await post(url, INIT)
    t.equal(response.status, 401)
    t.match(response.headers.get('www-authenticate'), /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp", scope="mcp"$/)
  })

  t.test('throw: 403 with a reference, the detail only in the log', async (t) => {
    const response = await post(url, INIT, { 'x-boom': '1' })
    t.equal(response.status, 403)
    const body = (await response.json()) as { error: { message: string } }
    const reference = /reference ([0-9a-f-]{36})/.exec(body.error.message)?.[1]
    t.ok(reference, body.error.message)
    t.notOk(body.error.message.includes('secret internal detail'))
    const logged = lines.map((line) => JSON.parse(line) as { reference?: string; err?: { message: string } }).find((line) => line.reference === reference)
    t.equal(logged?.err?.message, 'secret internal detail')
  })

  t.test('a WebSocket upgrade goes through the same phase', async (t) => {
    const wsUrl = url.replace('http', 'ws')
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(wsUrl, 'mcp')
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0))
      socket.on('open', () => resolve(101))
    })
    t.equal(refused, 401)
    const socket = new WebSocket(wsUrl, 'mcp', { headers: { 'x-user': 'alice' } })
    await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)))
    const answers: Array<{ id: number; result?: { tools?: Array<{ name: string }> } }> = []
    socket.on('message', (data) => answers.push(JSON.parse(String(data))))
    socket.send(JSON.stringify(INIT))
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
    socket.send(JSON.stringify(TOOLS_LIST))
    socket.send(JSON.stringify(CALL_ECHO))
    while (answers.length < 3) await new Promise((resolve) => setTimeout(resolve, 10))
    t.same(answers.find((answer) => answer.id === 2)?.result?.tools, [], 'lists are filtered on WebSocket too')
    t.match(answers.find((answer) => answer.id === 3), { error: { code: -32000, message: /insufficient scope/, data: { error: 'insufficient_scope', scope: 'echo.use' } } })
    socket.close()
    t.ok(lines.some((line) => line.includes('"principal":"user:alice"') && line.includes('tools/list')), 'the WebSocket session logs its principal')
  })
})
