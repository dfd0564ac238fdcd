/**
 * A proxied tool result goes to the client as the upstream wrote it (client/result-text.ts,
 * wire/message-text.ts): the upstream's bytes for the result behind the client's own id, on the hot
 * path and on Fastify's alike. Read through a raw upstream that writes each answer's text by hand,
 * and a raw client that reads each answer's bytes: an `"id"` inside the result stays the result's,
 * an answer that tries to add members after the result (a second id) is read whole and serialised
 * again, so is one with line breaks, a malformed one is the call's isError, and a route with a
 * filter phase never passes the upstream's bytes on.
 */
import { request as httpRequest } from 'node:http'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'
import { rawUpstream } from '../fixtures/raw-upstream.ts'

type Started = Gateway & { url: string }

/** The result text each tool's answer carries, spelt as a serialiser other than JSON.stringify might. */
const INNER_ID = '{"content":[{"type":"text","text":"has an id"}],"id":"inner","_meta":{"id":7}}'
const SPACED = '{ "content" : [ { "type":"text", "text":"spaced" } ] }'
const SECRET = '{"content":[{"type":"text","text":"key AKIAABCDEFGHIJKLMNOP"}]}'

/** The answer's whole text for tool `name` to request `id`. */
function answerText(name: string, id: number): string {
  switch (name) {
    case 'inner-id': return `{"jsonrpc":"2.0","id":${id},"result":${INNER_ID}}`
    case 'sdk-order': return `{"result":${SPACED},"jsonrpc":"2.0","id":${id}}`
    case 'spaced': return `{"jsonrpc":"2.0","id":${id},"result":${SPACED}}`
    // Valid JSON whose last "id" wins: spliced as it stands, the client would read this id, not its own.
    case 'second-id': return `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"two ids"}]},"id":${id}}`
    case 'line-breaks': return `{"jsonrpc":"2.0","id":${id},"result":{\n"content":[{"type":"text","text":"lines"}]\r\n}}`
    case 'malformed': return `{"jsonrpc":"2.0","id":${id},"result":{"content":[}`
    case 'secret': return `{"jsonrpc":"2.0","id":${id},"result":${SECRET}}`
    // The proxy reads a failed call's result (an SDK's "unknown tool"): parsed, so serialised again.
    // Parsers differ on a repeated key (JSON.parse keeps the last): the text is read and written again.
    case 'repeated': return `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"first","text":"last"}]}}`
    case 'failed': return `{"jsonrpc":"2.0","id":${id},"result":{ "content" : [ ], "isError" : true }}`
    default: return `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"fine"}]}}`
  }
}

const TOOLS = ['inner-id', 'sdk-order', 'spaced', 'second-id', 'line-breaks', 'malformed', 'secret', 'failed', 'repeated']

function rawServer(t: Test): Promise<string> {
  return rawUpstream(t, (message, response) => {
    const send = (text: string): void => void response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'raw' }).end(text)
    if (message.method === 'initialize') {
      return send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '0' } } }))
    }
    if (message.method === 'tools/list') return send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: TOOLS.map((name) => ({ name, inputSchema: { type: 'object' } })) } }))
    if (message.method === 'tools/call') return send(answerText(message.params?.name ?? '', message.id))
    send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }))
  })
}

async function proxy(t: Test, upstream: string, top: object, route: object = {}): Promise<Started> {
  const started = await startGateway(configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    ...top,
    routes: [{ location: '/p', server: { name: 'p', version: '1.0.0' }, prefix: 'never', upstreams: [{ name: 'raw', url: upstream, timeout: 2, health_interval: 60 }], ...route }],
  }, '<test>'))
  t.teardown(() => started.close())
  return started
}

const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' }

/** One POST; the answer's body as the bytes came. */
function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; session: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/p`, { method: 'POST', headers: { ...HEADERS, ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, session: response.headers['mcp-session-id'] as string | undefined, body: text }))
    })
    request.on('error', reject)
    request.end(body)
  })
}

async function session(gateway: Started, protocolVersion = '2025-11-25'): Promise<string> {
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'bytes', version: '1' } } }
  const version = { 'mcp-protocol-version': protocolVersion }
  const answer = await post(gateway.url, JSON.stringify(initialize), version)
  if (answer.session === undefined) throw new Error(`initialize answered ${answer.status}: ${answer.body}`)
  await post(gateway.url, '{"jsonrpc":"2.0","method":"notifications/initialized"}', { ...version, 'mcp-session-id': answer.session })
  return answer.session
}

const call = (id: number | string, name: string): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } })

t.test('a proxied result reaches the client as the upstream wrote it, behind the client\'s own id, on both paths', async (t) => {
  const upstream = await rawServer(t)
  const hot = await proxy(t, upstream, {})
  const plain = await proxy(t, upstream, { trust_proxy: true })
  for (const [gateway, path] of [[hot, 'hot path'], [plain, 'Fastify']] as const) {
    const id = await session(gateway)
    const served = gateway.hotPosts.served
    const inner = await post(gateway.url, call('c1', 'inner-id'), { 'mcp-session-id': id })
    t.equal(inner.body, `{"jsonrpc":"2.0","id":"c1","result":${INNER_ID}}`, `${path}: the result's bytes, its own "id" members untouched`)
    t.equal(JSON.parse(inner.body).id, 'c1', `${path}: the client's id`)
    const sdk = await post(gateway.url, call(41, 'sdk-order'), { 'mcp-session-id': id })
    t.equal(sdk.body, `{"jsonrpc":"2.0","id":41,"result":${SPACED}}`, `${path}: the SDK's member order, the result as spelt`)
    const spaced = await post(gateway.url, call(42, 'spaced'), { 'mcp-session-id': id })
    t.equal(spaced.body, `{"jsonrpc":"2.0","id":42,"result":${SPACED}}`, `${path}: spaces inside the result kept`)
    t.equal(gateway.hotPosts.served - served, path === 'hot path' ? 3 : 0, `${path}: served where it says`)
  }
})

t.test('an answer that is not exactly one result object is read whole: the client gets its own id, and only it', async (t) => {
  const upstream = await rawServer(t)
  const gateway = await proxy(t, upstream, {})
  const id = await session(gateway)
  const twice = await post(gateway.url, call(7, 'second-id'), { 'mcp-session-id': id })
  t.equal(twice.body, '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"two ids"}]}}', 'members after the result are not passed on: serialised again')
  const lines = await post(gateway.url, call(8, 'line-breaks'), { 'mcp-session-id': id })
  t.equal(lines.body, '{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"lines"}]}}', 'a result with line breaks is serialised again (an SSE data line holds none)')
  const malformed = JSON.parse((await post(gateway.url, call(9, 'malformed'), { 'mcp-session-id': id })).body)
  t.equal(malformed.id, 9, 'a malformed answer: the client\'s id')
  t.equal(malformed.result.isError, true, 'a malformed answer: an isError result')
  t.match(malformed.result.content[0].text, /upstream server "raw" is unavailable/)
  const failed = await post(gateway.url, call(11, 'failed'), { 'mcp-session-id': id })
  t.equal(failed.body, '{"jsonrpc":"2.0","id":11,"result":{"content":[],"isError":true}}', 'an isError result is read (parsed), so serialised again')
  const repeated = await post(gateway.url, call(12, 'repeated'), { 'mcp-session-id': id })
  t.equal(repeated.body, '{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"last"}]}}', 'a repeated key: the value the gateway read, serialised again')
  const after = await post(gateway.url, call(10, 'fine'), { 'mcp-session-id': id })
  t.equal(after.body, '{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"fine"}]}}', 'the next call is answered as usual')
})

t.test('a route whose filter phase sees results never passes the upstream\'s bytes on', async (t) => {
  const upstream = await rawServer(t)
  const filtered = await proxy(t, upstream, {}, { filter: { redact: true } })
  const id = await session(filtered)
  const secret = await post(filtered.url, call(1, 'secret'), { 'mcp-session-id': id })
  t.notMatch(secret.body, /AKIAABCDEFGHIJKLMNOP/, 'the filter redacted the key')
  t.equal(JSON.parse(secret.body).id, 1)
  const spaced = await post(filtered.url, call(2, 'spaced'), { 'mcp-session-id': id })
  t.equal(spaced.body, '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"spaced"}]}}', 'serialised by the gateway, not the upstream\'s spelling')
  const open = await proxy(t, upstream, {})
  const openId = await session(open)
  t.match((await post(open.url, call(3, 'secret'), { 'mcp-session-id': openId })).body, /AKIAABCDEFGHIJKLMNOP/, 'without a filter the result passes as it is')
})

t.test('a batch (a 2025-03-26 session) carries each proxied result as the upstream wrote it', async (t) => {
  const upstream = await rawServer(t)
  const gateway = await proxy(t, upstream, {})
  const id = await session(gateway, '2025-03-26')
  const batch = await post(gateway.url, `[${call(1, 'spaced')},${call(2, 'inner-id')},${call(3, 'second-id')}]`, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-03-26' })
  t.equal(batch.status, 200)
  t.match(batch.body, `{"jsonrpc":"2.0","id":1,"result":${SPACED}}`, 'the first result as spelt upstream')
  t.match(batch.body, `{"jsonrpc":"2.0","id":2,"result":${INNER_ID}}`, 'the second, its own "id" members untouched')
  t.match(batch.body, '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"two ids"}]}}', 'the third read whole, serialised again')
  t.same(JSON.parse(batch.body).map((answer: { id: number }) => answer.id).sort(), [1, 2, 3], 'one answer per request, each with its own id')
})
