/**
 * The hot path (transport/hot-post.ts) against Fastify's path, over real sockets: two gateways on the
 * same handler, one where the hot path serves (the default), one where it cannot (`trust_proxy: true`,
 * which changes nothing else for a client without X-Forwarded-For). Every request, hot or handed back
 * to Fastify with its body already read, must get the same answer from both: status, the headers a
 * client reads, the body (a failure's log reference aside). And the hot path must really serve the
 * requests it is for: its `served` count says how many it answered without Fastify.
 */
import { request as httpRequest } from 'node:http'
import path from 'node:path'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'
import { ACCEPT_BOTH, HANDLER, VERSION } from '../fixtures/transport-gateway.ts'
import { makeKey, startIssuer } from '../edge/fixtures/test-issuer.ts'

type Started = Gateway & { url: string }

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One POST on a fresh connection; `chunks` splits the body's bytes into separate writes. */
function post(url: string, body: string | Buffer, headers: Record<string, string | undefined>, chunks = 1): Promise<Answer> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  const sent: Record<string, string> = { 'content-length': String(bytes.length) }
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) sent[name] = value
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/mcp`, { method: 'POST', headers: sent, agent: false }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }))
    })
    request.on('error', reject)
    const size = Math.ceil(bytes.length / chunks)
    for (let at = 0; at < bytes.length; at += size) request.write(bytes.subarray(at, at + size))
    request.end()
  })
}

async function gateway(t: Test, top: object, route: object = {}): Promise<Started> {
  const started = await startGateway(configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    ...top,
    routes: [{ location: '/mcp', handler: HANDLER, server: { name: 'transport', version: '1.0.0' }, ...route }],
  }, '<test>'))
  t.teardown(() => started.close())
  return started
}

const CLIENT = { accept: ACCEPT_BOTH, 'content-type': 'application/json', 'mcp-protocol-version': VERSION }

async function session(gateway: Started, headers: Record<string, string> = {}): Promise<string> {
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'hot', version: '1' } } }
  const answer = await post(gateway.url, JSON.stringify(initialize), { ...CLIENT, ...headers })
  const id = answer.headers['mcp-session-id']
  if (typeof id !== 'string') throw new Error(`initialize answered ${answer.status}: ${answer.body}`)
  await post(gateway.url, '{"jsonrpc":"2.0","method":"notifications/initialized"}', { ...CLIENT, ...headers, 'mcp-session-id': id })
  return id
}

/** What a client reads of an answer, with what differs by design between two gateways taken out. */
function seen(answer: Answer): unknown {
  const pick = ['content-type', 'access-control-allow-origin', 'access-control-expose-headers', 'vary', 'retry-after', 'connection', 'www-authenticate']
  return {
    status: answer.status,
    // The Bearer challenge names the gateway's own address: the two listen on different ports.
    headers: Object.fromEntries(pick.map((name) => [name, typeof answer.headers[name] === 'string' ? (answer.headers[name] as string).replace(/127\.0\.0\.1:\d+/g, '<gateway>') : answer.headers[name]])),
    body: answer.body.replace(/\b(ref(?:erence)?:? )[\w-]+/gi, '$1<ref>').replace(/^id: .*$/gm, 'id: <event>'),
  }
}

const call = (id: number | string, name: string, args: object = {}, meta?: object) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta && { _meta: meta }) } })

t.test('every request gets the same answer from the hot path as from Fastify', async (t) => {
  const hot = await gateway(t, {})
  const plain = await gateway(t, { trust_proxy: true })
  const hotSession = await session(hot)
  const plainSession = await session(plain)
  const deep = `{"jsonrpc":"2.0","id":"deep","method":"ping","params":${'['.repeat(200)}${']'.repeat(200)}}`
  // [what, body, extra headers, body chunks, taken by the hot path]
  const cases: [string, string | Buffer, Record<string, string | undefined>, number, boolean][] = [
    ['a tools/call', call(1, 'echo', { message: 'hi' }), {}, 1, true],
    ['an allowed Origin (CORS headers)', call(2, 'echo', { message: 'cors' }), { origin: 'http://localhost:3000' }, 1, true],
    ['multi-byte text split across writes', Buffer.from(call(3, 'echo', { message: 'é😀€ ✓' })), {}, 7, true],
    ['no MCP-Protocol-Version', call(4, 'echo', { message: 'v' }), { 'mcp-protocol-version': undefined }, 1, true],
    ['a tool that throws', call(5, 'fail'), {}, 1, true],
    ['a tool with a bug', call(6, 'typo'), {}, 1, true],
    ['a ToolError', call(7, 'refuse'), {}, 1, true],
    ['an unknown tool', call(8, 'nope'), {}, 1, true],
    ['an unknown method', '{"jsonrpc":"2.0","id":9,"method":"nope/nope"}', {}, 1, true],
    ['ping', '{"jsonrpc":"2.0","id":"p","method":"ping"}', {}, 1, true],
    ['progress over SSE', call(10, 'count', { steps: 2 }, { progressToken: 'tok' }), {}, 1, true],
    ['a prompt that throws', '{"jsonrpc":"2.0","id":11,"method":"prompts/get","params":{"name":"broken"}}', {}, 1, true],
    ['JSON that does not parse', '{"jsonrpc":"2.0","id":12,"method":"too', {}, 1, false],
    ['JSON nested too deep', deep, {}, 1, false],
    ['JSON of too many values (limits.json_values)', `{"jsonrpc":"2.0","id":"many","method":"ping","params":{"a":[${'{},'.repeat(100_000)}{}]}}`, {}, 1, false],
    ['an id longer than an id may be', `{"jsonrpc":"2.0","id":"${'i'.repeat(2000)}","method":"ping"}`, {}, 1, false],
    ['not an object', '"just a string"', {}, 1, false],
    ['a batch', '[{"jsonrpc":"2.0","id":13,"method":"ping"},{"jsonrpc":"2.0","id":14,"method":"ping"}]', {}, 1, false],
    ['a notification', '{"jsonrpc":"2.0","method":"notifications/whatever"}', {}, 1, false],
    ['an answer to no request', '{"jsonrpc":"2.0","id":"x","result":{}}', {}, 1, false],
    ['an unsupported MCP-Protocol-Version', call(15, 'echo', { message: 'v' }), { 'mcp-protocol-version': '1999-01-01' }, 1, false],
    ['an unknown session', call(16, 'echo', { message: 'gone' }), { 'mcp-session-id': 'no-such-session' }, 1, false],
    ['a second initialize on the session', '{"jsonrpc":"2.0","id":17,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}', {}, 1, false],
    ['not JSON-RPC', '{"id":18,"method":"ping"}', {}, 1, false],
    ['Content-Type text/plain', call(19, 'echo', { message: 'x' }), { 'content-type': 'text/plain' }, 1, false],
    ['Accept without SSE', call(20, 'echo', { message: 'x' }), { accept: 'application/json' }, 1, false],
    ['a forbidden Origin', call(21, 'echo', { message: 'x' }), { origin: 'https://evil.example' }, 1, false],
    ['a body over body_limit', call(22, 'echo', { message: 'x'.repeat(5 * 1024 * 1024) }), {}, 1, false],
  ]
  for (const [what, body, headers, chunks, taken] of cases) {
    const before = hot.hotPosts.served
    const fromHot = await post(hot.url, body, { ...CLIENT, 'mcp-session-id': hotSession, ...headers }, chunks)
    const fromPlain = await post(plain.url, body, { ...CLIENT, 'mcp-session-id': plainSession, ...headers }, chunks)
    t.same(seen(fromHot), seen(fromPlain), `${what}: the same answer (${fromPlain.status})`)
    t.equal(hot.hotPosts.served - before, taken ? 1 : 0, `${what}: ${taken ? 'served by the hot path' : 'served by Fastify'}`)
  }
  t.equal(plain.hotPosts.served, 0, 'with trust_proxy the hot path serves nothing')
  const echoed = JSON.parse((await post(hot.url, Buffer.from(call(30, 'echo', { message: 'é😀' })), { ...CLIENT, 'mcp-session-id': hotSession }, 5)).body)
  t.same(echoed.result.content, [{ type: 'text', text: 'Tool echo: é😀' }], 'text split mid-character arrives whole')
})

t.test('session slots on the hot path: refused over the quota as Fastify refuses, and always given back', async (t) => {
  const quota = { limits: { concurrent_requests_per_session: 2 } }
  const hot = await gateway(t, quota)
  const plain = await gateway(t, { ...quota, trust_proxy: true })
  for (const target of [hot, plain]) {
    const id = await session(target)
    const answers = await Promise.all(Array.from({ length: 5 }, (_, n) => post(target.url, call(n, 'count', { steps: 8 }), { ...CLIENT, 'mcp-session-id': id })))
    const statuses = answers.map((answer) => answer.status).sort()
    t.same(statuses, [200, 200, 429, 429, 429], `${target === hot ? 'hot path' : 'Fastify'}: two run, three refused`)
    const refused = answers.find((answer) => answer.status === 429)!
    t.match(JSON.parse(refused.body), { jsonrpc: '2.0', error: { code: Number } }, 'a JSON-RPC error')
    // Every slot came back: 200 calls one after another all run.
    let served = 0
    for (let n = 0; n < 200; n++) if ((await post(target.url, call(n, 'echo', { message: 'm' }), { ...CLIENT, 'mcp-session-id': id })).status === 200) served++
    t.equal(served, 200, 'no slot kept after an answer')
  }
  t.ok(hot.hotPosts.served >= 200, 'the hot gateway served them itself')
})

t.test('rate rules on the hot path: counted under the same key as Fastify\'s path, refused as it refuses', async (t) => {
  // A transport rule (every request, 429 + Retry-After) and a tool rule (an isError result), by address.
  const limits = { limits: { rate: [{ key: 'ip', limit: 6, window: 60 }, { key: 'principal', tool: 'echo', limit: 2, window: 60 }] } }
  const hot = await gateway(t, {}, limits)
  const plain = await gateway(t, { trust_proxy: true }, limits)
  // initialize and notifications/initialized are Fastify's on both gateways and count 2 of the 6: the
  // hot path's requests must land in the same bucket for the seventh request to be the one refused.
  const hotSession = await session(hot)
  const plainSession = await session(plain)
  const ping = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`
  const steps: [string, string, number][] = [
    ['a counted call', call(1, 'echo', { message: 'one' }), 200],
    ['the tool\'s second call', call(2, 'echo', { message: 'two' }), 200],
    ['the tool over its rule: an isError result', call(3, 'echo', { message: 'three' }), 200],
    ['the transport\'s sixth request', ping(4), 200],
    ['the transport over its rule', ping(5), 429],
    ['still over it', call(6, 'echo', { message: 'six' }), 429],
  ]
  // Retry-After and the milliseconds in the text depend on when each gateway was asked.
  const timeless = (answer: Answer): unknown => {
    const view = seen(answer) as { headers: Record<string, unknown>; body: string }
    if (typeof view.headers['retry-after'] === 'string') view.headers['retry-after'] = '<seconds>'
    return { ...view, body: view.body.replace(/\d+(\.\d+)? (s|ms)\b/g, '<n> $2').replace(/"retryAfterMs":\d+/g, '"retryAfterMs":<n>') }
  }
  for (const [what, body, status] of steps) {
    const before = hot.hotPosts.served
    const fromHot = await post(hot.url, body, { ...CLIENT, 'mcp-session-id': hotSession })
    const fromPlain = await post(plain.url, body, { ...CLIENT, 'mcp-session-id': plainSession })
    t.equal(fromHot.status, status, `${what}: ${status}`)
    t.same(timeless(fromHot), timeless(fromPlain), `${what}: the same answer`)
    t.equal(hot.hotPosts.served - before, 1, `${what}: served by the hot path`)
  }
  const overTool = JSON.parse((await post(plain.url, call(7, 'echo', { message: 'x' }), { ...CLIENT, 'mcp-session-id': plainSession })).body)
  t.equal(overTool.error?.code, -32000, 'Fastify\'s path refuses the next call at the transport rule too')
})

t.test('once closed (the app is closing), the hot path hands every request to Fastify', async (t) => {
  const hot = await gateway(t, {})
  const id = await session(hot)
  hot.hotPosts.close()
  const before = hot.hotPosts.served
  const answer = await post(hot.url, call(1, 'echo', { message: 'x' }), { ...CLIENT, 'mcp-session-id': id })
  t.equal(answer.status, 200, 'still served (by Fastify)')
  t.equal(hot.hotPosts.served, before, 'not by the hot path once closed')
})

t.test('protected routes: the access phase decides the same on the hot path (JWT and component scopes; an access module)', async (t) => {
  const key = await makeKey('k')
  const issuer = await startIssuer(t, [key])
  const audience = 'https://mcp.test/hot'
  const jwtRoute = {
    handler: path.resolve('handlers/echo.ts'),
    server: { name: 'echo', version: '1.0.0' },
    auth: { jwt: { issuer: issuer.url, audience }, required_scopes: ['mcp'] },
    scopes: { tools: { 'ech*': ['echo.use'] } },
  }
  const moduleRoute = {
    handler: path.resolve('handlers/echo.ts'),
    server: { name: 'echo', version: '1.0.0' },
    auth: { access: path.resolve('test/edge/fixtures/access.ts'), required_scopes: ['mcp'] },
  }
  const alice = `Bearer ${await issuer.mint(key, { sub: 'alice', scope: 'mcp echo.use' }, { audience })}`
  const bob = `Bearer ${await issuer.mint(key, { sub: 'bob', scope: 'mcp echo.use' }, { audience })}`
  const noEcho = `Bearer ${await issuer.mint(key, { sub: 'carol', scope: 'mcp' }, { audience })}`
  const echo = call(1, 'echo', { message: 'hi' })
  const list = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
  // Tool search (catalogue: search): call_tool is decided as the tool it calls, on both paths.
  const viaCallTool = call(3, 'call_tool', { name: 'echo', arguments: { message: 'hi' } })
  const search = call(4, 'search_tools', { query: 'echo a message' })
  const suites: [string, object, Record<string, string>, [string, string, Record<string, string>, boolean][]][] = [
    ['JWT', jwtRoute, { authorization: alice }, [
      ['a call with a good token', echo, {}, true],
      ['a list with a good token', list, {}, true],
      ['a token without the tool\'s scope', echo, { authorization: noEcho }, true],
      ["another principal's token on the session", echo, { authorization: bob }, true],
      // No credential is decided once the body is read (the tool's scopes), as on Fastify's path.
      ['no token', echo, { authorization: '' }, true],
      ['a token that is not a JWT', echo, { authorization: 'Bearer nonsense' }, false],
    ]],
    ['access module', moduleRoute, { 'x-user': 'alice' }, [
      ['allowed by the module', echo, {}, true],
      ['refused by the module for this tool', echo, { 'x-user': 'eve' }, true],
      ['refused with its own status', echo, { 'x-user': 'mallory' }, true],
      ['a module that throws', echo, { 'x-boom': '1' }, true],
      ['no identity at all', list, { 'x-user': '' }, true],
    ]],
    ['JWT, search mode', { ...jwtRoute, catalogue: 'search' }, { authorization: alice }, [
      ['call_tool with a good token', viaCallTool, {}, true],
      ['call_tool without the called tool\'s scope', viaCallTool, { authorization: noEcho }, true],
      ['search_tools', search, {}, true],
      ['tools/list', list, {}, true],
    ]],
    ['access module, search mode', { ...moduleRoute, catalogue: 'search' }, { 'x-user': 'alice' }, [
      ['call_tool allowed by the module', viaCallTool, {}, true],
      ['call_tool of a tool the module refuses', viaCallTool, { 'x-user': 'eve' }, true],
    ]],
  ]
  for (const [name, route, owner, cases] of suites) {
    const hot = await gateway(t, {}, route)
    const plain = await gateway(t, { trust_proxy: true }, route)
    const hotSession = await session(hot, owner)
    const plainSession = await session(plain, owner)
    for (const [what, body, headers, taken] of cases) {
      const merged: Record<string, string | undefined> = { ...CLIENT, ...owner, ...headers }
      for (const [header, value] of Object.entries(merged)) if (value === '') merged[header] = undefined
      // Twice: a token seen for the first time is verified asynchronously, on Fastify's path; then it is known.
      for (const time of ['first', 'second']) {
        const before = hot.hotPosts.served
        const fromHot = await post(hot.url, body, { ...merged, 'mcp-session-id': hotSession })
        const fromPlain = await post(plain.url, body, { ...merged, 'mcp-session-id': plainSession })
        t.same(seen(fromHot), seen(fromPlain), `${name}, ${what} (${time} time): the same answer (${fromPlain.status})`)
        if (time === 'second') t.equal(hot.hotPosts.served - before, taken ? 1 : 0, `${name}, ${what}: ${taken ? 'decided on the hot path' : 'left to Fastify'}`)
      }
    }
  }
})

t.test('stateless requests (2026-07-28) get the same answer from the hot path as from Fastify', async (t) => {
  const hot = await gateway(t, {})
  const plain = await gateway(t, { trust_proxy: true })
  const era = '2026-07-28'
  const meta = { 'io.modelcontextprotocol/protocolVersion': era, 'io.modelcontextprotocol/clientCapabilities': {} }
  const stateless = (id: number, method: string, params: object = {}) => JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } })
  const headers = (method: string, name?: string) => ({ ...CLIENT, 'mcp-protocol-version': era, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) })
  const cases: [string, string, Record<string, string | undefined>, boolean][] = [
    ['a tools/call', stateless(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), headers('tools/call', 'echo'), true],
    ['tools/list', stateless(2, 'tools/list'), headers('tools/list'), true],
    ['a tool that throws', stateless(3, 'tools/call', { name: 'fail', arguments: {} }), headers('tools/call', 'fail'), true],
    ['progress over SSE', stateless(4, 'tools/call', { name: 'count', arguments: { steps: 2 }, _meta: { ...meta, progressToken: 'p' } }), headers('tools/call', 'count'), true],
    ['Mcp-Method not the body\'s', stateless(5, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), headers('tools/list'), true],
    ['Mcp-Name missing', stateless(6, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), headers('tools/call'), true],
    ['a method the stateless wire does not serve', stateless(7, 'logging/setLevel', { level: 'info' }), headers('logging/setLevel'), true],
    ['no envelope (the header says stateless)', JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }), headers('tools/list'), true],
    ['a notification', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/whatever', params: { _meta: meta } }), headers('notifications/whatever'), false],
    ['initialize', JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }), { ...CLIENT }, false],
    ['no session and an older version', call(10, 'echo', { message: 'x' }), { ...CLIENT }, false],
  ]
  for (const [what, body, sent, taken] of cases) {
    const before = hot.hotPosts.served
    const fromHot = await post(hot.url, body, sent)
    const fromPlain = await post(plain.url, body, sent)
    t.same(seen(fromHot), seen(fromPlain), `${what}: the same answer (${fromPlain.status})`)
    t.equal(hot.hotPosts.served - before, taken ? 1 : 0, `${what}: ${taken ? 'served by the hot path' : 'served by Fastify'}`)
  }
})
