/**
 * The Streamable HTTP transport over raw HTTP (inject): every status code and JSON-RPC error it
 * answers, in the order its checks run, and that the gateway keeps serving after each bad request.
 * The SSE side (GET streams, POST answers that stream) is in streamable-http-sse.test.ts.
 */
import t from 'tap'
import { RpcCode } from '../../gateway/wire/errors.ts'
import {
  assertNoLeak,
  assertRpcError,
  initializeRequest,
  inject,
  injectGateway,
  injectSession,
  VERSION,
} from '../fixtures/transport-gateway.ts'

const ping = (id: string | number = 'ping') => ({ jsonrpc: '2.0', id, method: 'ping' })
const call = (id: number, method: string, params?: object) => ({ jsonrpc: '2.0', id, method, ...(params && { params }) })
const SESSION_NOT_FOUND = -32001

t.test('initialize answers 200 JSON with a visible-ASCII Mcp-Session-Id', async (t) => {
  const gateway = await injectGateway(t)
  const response = await inject(gateway, initializeRequest(7))
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/json\b/)
  const sessionId = response.headers['mcp-session-id']
  t.type(sessionId, 'string')
  t.match(sessionId, /^[\x21-\x7e]+$/, 'only visible ASCII (0x21–0x7E)')
  t.match(response.json(), { jsonrpc: '2.0', id: 7, result: { protocolVersion: VERSION, serverInfo: { name: 'transport' }, capabilities: {} } })
  t.equal(await gateway.store.count('/mcp'), 1, 'the session is in the store')

  const older = await inject(gateway, initializeRequest('b', '2025-06-18'))
  t.equal(older.json().result.protocolVersion, '2025-06-18', 'a supported older version is kept')
  const unknown = await inject(gateway, initializeRequest('c', '1999-01-01'))
  t.equal(unknown.json().result.protocolVersion, VERSION, 'an unknown version is answered with the latest')
  t.not(older.headers['mcp-session-id'], sessionId, 'each initialize makes its own session')
})

t.test('MCP-Protocol-Version: any stateful version, or none (taken as 2025-03-26), is served', async (t) => {
  const gateway = await injectGateway(t)
  const sessionId = await injectSession(gateway)
  for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', undefined]) {
    const response = await inject(gateway, ping(1), { 'mcp-session-id': sessionId, 'mcp-protocol-version': version })
    t.same({ status: response.statusCode, body: response.json() }, { status: 200, body: { jsonrpc: '2.0', id: 1, result: {} } }, String(version))
  }
})

t.test('notifications and client responses answer 202 with no body', async (t) => {
  const gateway = await injectGateway(t)
  const sessionId = (await inject(gateway, initializeRequest())).headers['mcp-session-id'] as string
  const initialized = await inject(gateway, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': sessionId })
  t.equal(initialized.statusCode, 202)
  t.equal(initialized.body, '')
  t.equal((await gateway.store.get(sessionId))?.initialized, true, 'the session is now initialized')
  const unknownNotification = await inject(gateway, { jsonrpc: '2.0', method: 'notifications/whatever' }, { 'mcp-session-id': sessionId })
  t.equal(unknownNotification.statusCode, 202, 'an unknown notification is ignored, not refused')
  const answer = await inject(gateway, { jsonrpc: '2.0', id: 'edge-404', result: {} }, { 'mcp-session-id': sessionId })
  t.equal(answer.statusCode, 202, 'a response to no pending request is accepted and dropped')
  t.equal(answer.body, '')
})

t.test('Origin and Host: DNS-rebinding protection', async (t) => {
  const gateway = await injectGateway(t)
  assertRpcError(t, await inject(gateway, initializeRequest(), { origin: 'http://evil.example' }), 403, RpcCode.ServerError)
  assertRpcError(t, await inject(gateway, initializeRequest(), { host: 'evil.example' }), 403, RpcCode.ServerError)
  assertRpcError(t, await inject(gateway, initializeRequest(), { origin: 'null' }), 403, RpcCode.ServerError)
  for (const host of ['127.0.0.1:9999', 'localhost:3000', '[::1]:8080']) {
    const response = await inject(gateway, initializeRequest(), { host, origin: `http://${host}` })
    t.equal(response.statusCode, 200, `loopback ${host} is allowed`)
  }
  const sessionId = await injectSession(gateway)
  for (const method of ['GET', 'DELETE'] as const) {
    const response = await gateway.app.inject({ method, url: '/mcp', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, origin: 'http://evil.example' } })
    assertRpcError(t, response, 403, RpcCode.ServerError)
  }
  t.ok(await gateway.store.get(sessionId), 'the refused DELETE did not end the session')
})

t.test('allowed_origins admits the listed origin and its host, nothing more', async (t) => {
  const gateway = await injectGateway(t, { allowed_origins: ['https://app.example.com'] })
  const allowed = await inject(gateway, initializeRequest(), { host: 'app.example.com', origin: 'https://app.example.com' })
  t.equal(allowed.statusCode, 200)
  assertRpcError(t, await inject(gateway, initializeRequest(), { host: 'app.example.com', origin: 'http://app.example.com' }), 403, RpcCode.ServerError)
  assertRpcError(t, await inject(gateway, initializeRequest(), { host: 'api.example.com' }), 403, RpcCode.ServerError)
})

t.test('every refusal answers with a JSON-RPC error, and the gateway keeps serving', async (t) => {
  const gateway = await injectGateway(t, {}, { body_limit: 2048 })
  const sessionId = await injectSession(gateway)
  const onSession = { 'mcp-session-id': sessionId }

  interface Case { name: string; body: unknown; headers?: Record<string, string | undefined>; status: number; code: number; id?: string | number | null }
  const cases: Case[] = [
    { name: 'Accept without text/event-stream', body: ping(1), headers: { ...onSession, accept: 'application/json' }, status: 406, code: RpcCode.ServerError },
    { name: 'Accept without application/json', body: ping(1), headers: { ...onSession, accept: 'text/event-stream' }, status: 406, code: RpcCode.ServerError },
    { name: 'no Accept', body: ping(1), headers: { ...onSession, accept: undefined }, status: 406, code: RpcCode.ServerError },
    { name: 'Content-Type text/plain', body: ping(1), headers: { ...onSession, 'content-type': 'text/plain' }, status: 415, code: RpcCode.ServerError },
    { name: 'no Content-Type', body: ping(1), headers: { ...onSession, 'content-type': undefined }, status: 415, code: RpcCode.ServerError },
    { name: 'a body over body_limit', body: { ...ping(1), params: { pad: 'x'.repeat(4096) } }, headers: onSession, status: 413, code: RpcCode.ServerError },
    { name: 'malformed JSON', body: '{"jsonrpc": "2.0", "id": 1,', headers: onSession, status: 400, code: RpcCode.ParseError },
    { name: 'an empty body', body: '', headers: onSession, status: 400, code: RpcCode.ParseError },
    { name: 'JSON that is not JSON-RPC', body: { foo: 1 }, headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'a JSON scalar', body: '42', headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'JSON null', body: 'null', headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'an empty batch', body: [], headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'a batch', body: [ping(1), ping(2)], headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'jsonrpc "1.0" (id echoed)', body: { ...ping(5), jsonrpc: '1.0' }, headers: onSession, status: 400, code: RpcCode.InvalidRequest, id: 5 },
    { name: 'no jsonrpc member (id echoed)', body: { id: 'x', method: 'ping' }, headers: onSession, status: 400, code: RpcCode.InvalidRequest, id: 'x' },
    { name: 'an object id', body: { ...ping(), id: { n: 1 } }, headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'a fractional id', body: { ...ping(), id: 1.5 }, headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'a null id', body: { ...ping(), id: null }, headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'a boolean id', body: { ...ping(), id: true }, headers: onSession, status: 400, code: RpcCode.InvalidRequest },
    { name: 'a numeric method (id echoed)', body: { jsonrpc: '2.0', id: 6, method: 7 }, headers: onSession, status: 400, code: RpcCode.InvalidRequest, id: 6 },
    { name: 'array params (id echoed)', body: { ...ping(8), params: [1] }, headers: onSession, status: 400, code: RpcCode.InvalidRequest, id: 8 },
    { name: 'no Mcp-Session-Id (id echoed)', body: ping(9), headers: {}, status: 400, code: RpcCode.ServerError, id: 9 },
    { name: 'a notification without Mcp-Session-Id', body: { jsonrpc: '2.0', method: 'notifications/initialized' }, headers: {}, status: 400, code: RpcCode.ServerError },
    { name: 'an unknown session (id echoed)', body: ping('u'), headers: { 'mcp-session-id': 'no-such-session' }, status: 404, code: SESSION_NOT_FOUND, id: 'u' },
    { name: 'an unsupported MCP-Protocol-Version (id echoed)', body: ping(10), headers: { ...onSession, 'mcp-protocol-version': '1999-01-01' }, status: 400, code: RpcCode.ServerError, id: 10 },
    { name: 'initialize without protocolVersion (id echoed)', body: { jsonrpc: '2.0', id: 11, method: 'initialize', params: {} }, headers: {}, status: 400, code: RpcCode.InvalidParams, id: 11 },
    { name: 'initialize with non-object capabilities', body: { ...initializeRequest(12), params: { protocolVersion: VERSION, capabilities: 'all' } }, headers: {}, status: 400, code: RpcCode.InvalidParams, id: 12 },
  ]

  for (const c of cases) {
    await t.test(c.name, async (t) => {
      assertRpcError(t, await inject(gateway, c.body, c.headers), c.status, c.code, c.id ?? null)
      const after = await inject(gateway, ping('alive'), { ...onSession, 'mcp-protocol-version': VERSION })
      t.same({ status: after.statusCode, body: after.json() }, { status: 200, body: { jsonrpc: '2.0', id: 'alive', result: {} } }, 'the gateway still serves')
    })
  }
  t.equal(await gateway.store.count('/mcp'), 1, 'no refused initialize made a session')
})

t.test('protocol errors of a session answer 200 with the JSON-RPC error', async (t) => {
  const gateway = await injectGateway(t)
  const onSession = { 'mcp-session-id': await injectSession(gateway) }
  const send = (body: object) => inject(gateway, body, onSession)

  assertRpcError(t, await send(call(1, 'tools/explode')), 200, RpcCode.MethodNotFound, 1)
  assertRpcError(t, await send(call(2, 'tools/call', { arguments: { message: 'x' } })), 200, RpcCode.InvalidParams, 2)
  assertRpcError(t, await send(call(3, 'tools/call', { name: 'nope' })), 200, RpcCode.InvalidParams, 3)
  const missing = assertRpcError(t, await send(call(4, 'prompts/get', { name: 'greet' })), 200, RpcCode.InvalidParams, 4)
  t.match(missing.message, /name/, 'names the missing argument')
  assertRpcError(t, await send(call(5, 'prompts/get', { name: 'greet', arguments: { name: 3 } })), 200, RpcCode.InvalidParams, 5)
  assertRpcError(t, await send(call(6, 'resources/read', {})), 200, RpcCode.InvalidParams, 6)
  assertRpcError(t, await send(call(7, 'resources/read', { uri: 'test://nothing-here' })), 200, RpcCode.ResourceNotFound, 7)

  const greeted = await send(call(8, 'prompts/get', { name: 'greet', arguments: { name: 'Ada' } }))
  t.match(greeted.json(), { id: 8, result: { messages: [{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }] } })
})

t.test('a failing callback: a tool gives an isError result, a prompt or resource -32603; never a stack', async (t) => {
  const gateway = await injectGateway(t)
  const onSession = { 'mcp-session-id': await injectSession(gateway) }

  const tool = await inject(gateway, call(1, 'tools/call', { name: 'fail' }), onSession)
  t.equal(tool.statusCode, 200)
  t.match(tool.json(), { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: /^Tool fail failed \(ref [\w-]+\)$/ }], isError: true } }, 'a reference, nothing of the message')
  assertNoLeak(t, tool.body, 'the disk is on fire')
  t.notMatch(tool.body, /\bat .+:\d+:\d+/, 'no stack frame')

  const prompt = await inject(gateway, call(2, 'prompts/get', { name: 'broken' }), onSession)
  assertRpcError(t, prompt, 200, RpcCode.InternalError, 2)
  assertNoLeak(t, prompt.body, 'prompt internals leaked')

  const resource = await inject(gateway, call(3, 'resources/read', { uri: 'test://broken' }), onSession)
  assertRpcError(t, resource, 200, RpcCode.InternalError, 3)
  assertNoLeak(t, resource.body, 'resource internals leaked')

  const after = await inject(gateway, ping(4), onSession)
  t.equal(after.statusCode, 200, 'the session goes on')
})

t.test('max_sessions: an initialize over the limit is refused with 503 until a session ends', async (t) => {
  const gateway = await injectGateway(t, { max_sessions: 1 })
  const first = (await inject(gateway, initializeRequest(1))).headers['mcp-session-id'] as string
  const refused = assertRpcError(t, await inject(gateway, initializeRequest(2)), 503, RpcCode.ServerError, 2)
  t.match(refused.message, /max_sessions/)
  t.equal(await gateway.store.count('/mcp'), 1)
  const ended = await gateway.app.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-session-id': first } })
  t.equal(ended.statusCode, 200)
  t.equal((await inject(gateway, initializeRequest(3))).statusCode, 200, 'the freed slot can be used')
})

t.test('DELETE ends the session; the id is then unknown', async (t) => {
  const gateway = await injectGateway(t)
  const sessionId = await injectSession(gateway)
  // MCP-Protocol-Version names the 2025-11-25 (session) wire on every request, as its clients send it.
  const remove = (headers: Record<string, string>) => gateway.app.inject({ method: 'DELETE', url: '/mcp', headers: { 'mcp-protocol-version': VERSION, ...headers } })

  assertRpcError(t, await remove({}), 400, RpcCode.ServerError)
  const deleted = await remove({ 'mcp-session-id': sessionId })
  t.equal(deleted.statusCode, 200)
  t.equal(deleted.body, '')
  t.equal(await gateway.store.get(sessionId), undefined, 'gone from the store')
  assertRpcError(t, await inject(gateway, ping(1), { 'mcp-session-id': sessionId }), 404, SESSION_NOT_FOUND, 1)
  assertRpcError(t, await remove({ 'mcp-session-id': sessionId }), 404, SESSION_NOT_FOUND)
  const get = await gateway.app.inject({ method: 'GET', url: '/mcp', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId } })
  assertRpcError(t, get, 404, SESSION_NOT_FOUND)
})

t.test('a session id is valid only on the route that made it', async (t) => {
  const gateway = await injectGateway(t)
  const sessionId = await injectSession(gateway)
  await gateway.store.create({ ...(await gateway.store.get(sessionId))!, id: 'foreign', route: '/other' }, 60_000)
  assertRpcError(t, await inject(gateway, ping(1), { 'mcp-session-id': 'foreign' }), 404, SESSION_NOT_FOUND, 1)
})

t.test('GET refusals: Accept, session header, unknown session', async (t) => {
  const gateway = await injectGateway(t)
  const sessionId = await injectSession(gateway)
  const get = (headers: Record<string, string>) => gateway.app.inject({ method: 'GET', url: '/mcp', headers: { 'mcp-protocol-version': VERSION, ...headers } })
  assertRpcError(t, await get({ accept: 'application/json', 'mcp-session-id': sessionId }), 406, RpcCode.ServerError)
  assertRpcError(t, await get({ 'mcp-session-id': sessionId }), 406, RpcCode.ServerError)
  assertRpcError(t, await get({ accept: 'text/event-stream' }), 400, RpcCode.ServerError)
  assertRpcError(t, await get({ accept: 'text/event-stream', 'mcp-session-id': 'no-such-session' }), 404, SESSION_NOT_FOUND)
  assertRpcError(t, await get({ accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2024-01-01' }), 400, RpcCode.ServerError)
  assertRpcError(t, await get({ accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': 'garbage' }), 400, RpcCode.InvalidParams)
})

t.test('an unknown path answers 404 with a JSON-RPC error; health endpoints answer', async (t) => {
  const gateway = await injectGateway(t)
  for (const method of ['GET', 'POST'] as const) {
    const response = await gateway.app.inject({ method, url: '/nowhere', headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, payload: method === 'POST' ? '{}' : undefined })
    const error = assertRpcError(t, response, 404, RpcCode.InvalidRequest)
    t.match(error.message, /\/nowhere/)
  }
  t.same((await gateway.app.inject({ url: '/healthz' })).json(), { status: 'ok' })
  t.equal((await gateway.app.inject({ url: '/readyz' })).statusCode, 200)
})

t.test('other HTTP methods on an MCP path are 405 with Allow', async (t) => {
  const gateway = await injectGateway(t)
  for (const method of ['PUT', 'PATCH'] as const) {
    const response = await gateway.app.inject({ method, url: '/mcp', headers: { host: '127.0.0.1' } })
    t.equal(response.statusCode, 405, method)
    t.equal(response.headers.allow, 'GET, POST, DELETE')
    t.equal(JSON.parse(response.body).error.code, -32000)
  }
  // OPTIONS is the CORS preflight (test/edge/cors.test.ts); without an Origin it names the methods.
  const options = await gateway.app.inject({ method: 'OPTIONS', url: '/mcp', headers: { host: '127.0.0.1' } })
  t.equal(options.statusCode, 204)
  t.equal(options.headers.allow, 'GET, POST, DELETE')
})
