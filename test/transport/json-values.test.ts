/**
 * The parse's work is bounded, not only its depth (issue 26, row 6): a body within `body_limit` made
 * of many small containers (4 MiB of `{},` is 1.4 M objects, a second of JSON.parse) is refused
 * before parsing with -32600 and the request's id, on the hot path and Fastify's, on stateless
 * requests and WebSocket frames, and the event loop is not held meanwhile. The count the scan makes
 * agrees with what JSON.parse builds, strings full of commas and brackets included. An id longer than
 * MAX_ID_LENGTH is refused (and not echoed), since a request holds its id as long as it lives.
 */
import { once } from 'node:events'
import fc from 'fast-check'
import t from 'tap'
import { WebSocket } from 'ws'
import { exceedsValues } from '../../gateway/transport/json-text.ts'
import { RpcCode } from '../../gateway/wire/errors.ts'
import { MAX_ID_LENGTH } from '../../gateway/wire/jsonrpc.ts'
import { LoopWatch } from '../resilience/fuzz-kit.ts'
import { assertRpcError, CLIENT_HEADERS, inject, injectGateway, socketGateway } from '../fixtures/transport-gateway.ts'

/** What the scan counts for a parsed value: one per array or object, one per member after each container's first. */
function valuesOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  const children = Array.isArray(value) ? value : Object.values(value)
  return 1 + Math.max(0, children.length - 1) + children.reduce<number>((sum, child) => sum + valuesOf(child), 0)
}

t.test('the count agrees with the parsed value, strings full of commas and brackets included', async (t) => {
  const text = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', ',', '"', '\\', 'a', ' ') })
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small', maxDepth: 8 }, text, fc.integer(), fc.array(tie('node'), { maxLength: 6 }), fc.dictionary(text, tie('node'), { maxKeys: 5 })),
  })).node
  let checked = 0
  fc.assert(
    fc.property(value, fc.integer({ min: 0, max: 30 }), (parsed, max) => {
      checked++
      return exceedsValues(JSON.stringify(parsed, null, checked % 2 === 0 ? 1 : undefined), max) === valuesOf(parsed) > max
    }),
    { numRuns: 2000 },
  )
  t.equal(checked, 2000)
  t.equal(exceedsValues(JSON.stringify({ csv: 'a,b,c,'.repeat(100_000) }), 1024), false, 'commas in a string do not count')
})

const call = (id: string | number, bulk: string, extra = '') =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","bulk":${bulk}}${extra}}}`
const many = (unit: string, count: number) => `[${`${unit},`.repeat(count - 1)}${unit}]`

/**
 * POSTs on a fresh connection; the answer and the longest event-loop hold meanwhile (the gateway is in
 * this process), counted in this process's CPU time so that other processes on a shared machine do not count.
 */
async function postTimed(url: string, body: string, headers: Record<string, string>) {
  const watch = new LoopWatch()
  const response = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...CLIENT_HEADERS, ...headers }, body })
  const answer = await response.json() as { id: unknown; error?: { code: number; message: string }; result?: unknown }
  await new Promise((resolve) => setTimeout(resolve, 10))
  watch.stop()
  return { status: response.status, answer, stallMs: watch.overall }
}

t.test('4 MiB of small containers: 400 -32600 with the id, hot path and Fastify, without holding the loop', async (t) => {
  const gateway = await socketGateway(t)
  const init = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: CLIENT_HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}' })
  const session = init.headers.get('mcp-session-id')!
  await init.text()
  const benign = call(2, JSON.stringify('x'.repeat(3_980_000)))
  await postTimed(gateway.url, benign, { 'mcp-session-id': session })
  const yardstick = await postTimed(gateway.url, benign, { 'mcp-session-id': session })
  t.equal(yardstick.status, 200, 'a 4 MB argument is served')
  const shapes: [string, string][] = [
    ['1.4 M empty objects', many('{}', 1_398_000)],
    ['depth-120 array trees', many(`${'['.repeat(120)}${']'.repeat(120)}`, 17_400)],
    ['one object of 300 k keys', `{${Array.from({ length: 300_000 }, (_, i) => `"k${i}":0`).join(',')}}`],
  ]
  for (const [what, bulk] of shapes) {
    const body = call(`many-${what}`, bulk)
    t.ok(body.length <= 4 * 1024 * 1024, `${what}: within body_limit (${body.length} bytes)`)
    for (const [way, headers] of [['session (hot path)', { 'mcp-session-id': session }], ['no session (Fastify)', {}]] as const) {
      const served = gateway.hotPosts.served
      const refused = await postTimed(gateway.url, body, headers)
      t.equal(refused.status, 400, `${what}, ${way}: 400`)
      t.match(refused.answer, { jsonrpc: '2.0', id: `many-${what}`, error: { code: RpcCode.InvalidRequest, message: /100000 values.*limits\.json_values/ } })
      t.equal(gateway.hotPosts.served, served, 'answered by Fastify, the hot path handing it back')
      t.comment(`${what}, ${way}: longest stall ${refused.stallMs.toFixed(0)} ms (a 4 MB argument: ${yardstick.stallMs.toFixed(0)} ms)`)
      // JSON.parse alone takes 0.4-1 s on these; the scans take a few ms per MiB.
      t.ok(refused.stallMs < Math.max(250, 3 * yardstick.stallMs), `${what}, ${way}: no longer a stall than a well-formed body of that size`)
    }
  }
})

t.test('at the bound it is served, one over it is refused; stateless requests too', async (t) => {
  const gateway = await injectGateway(t, {}, { limits: { json_values: 2048 } })
  const session = (await inject(gateway, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } })).headers['mcp-session-id'] as string
  // The message itself holds 3 containers and 2 more members ({…,"id","method","params"} params {"name","arguments"} arguments {"message","bulk"}):
  // 3 + (3 + 1 + 1) = 8 values; the bulk array then 1 + (n - 1).
  const atBound = await inject(gateway, call(5, many('0', 2048 - 8)), { 'mcp-session-id': session })
  t.equal(atBound.statusCode, 200, '2048 values: served')
  assertRpcError(t, await inject(gateway, call(6, many('0', 2048 - 7)), { 'mcp-session-id': session }), 400, RpcCode.InvalidRequest, 6)
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
  const stateless = await inject(gateway, call('s', many('{}', 5000), `,"_meta":${JSON.stringify(envelope)}`),
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' })
  assertRpcError(t, stateless, 400, RpcCode.InvalidRequest, 's')
})

t.test('WebSocket frames: the same refusal, with the id, and the connection serves on', async (t) => {
  const gateway = await socketGateway(t, { transports: ['streamable_http', 'websocket'] }, { limits: { json_values: 2048 } })
  const ws = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/mcp`, 'mcp')
  t.teardown(() => ws.terminate())
  const answers: unknown[] = []
  ws.on('message', (data) => answers.push(JSON.parse(data.toString())))
  await once(ws, 'open')
  const next = async (): Promise<unknown> => {
    for (let waited = 0; answers.length === 0 && waited < 10_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5))
    return answers.shift()
  }
  ws.send(call(3, many('[]', 10_000)))
  t.match(await next(), { jsonrpc: '2.0', id: 3, error: { code: RpcCode.InvalidRequest, message: /limits\.json_values/ } })
  ws.send('{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}')
  t.match(await next(), { id: 4, result: { protocolVersion: '2025-11-25' } }, 'the connection still serves')
})

t.test(`an id over ${MAX_ID_LENGTH} characters is refused with -32600 and not echoed, on every way in`, async (t) => {
  const gateway = await socketGateway(t)
  const long = 'i'.repeat(MAX_ID_LENGTH + 1)
  const bodies = [
    `{"jsonrpc":"2.0","id":"${long}","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
    `{"jsonrpc":"2.0","id":"${long}","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
    // Refused by the value scan: the id that scan reads is no longer than an id may be, or null.
    call(long, many('{}', 200_000)),
  ]
  for (const body of bodies) {
    const stateless = body.includes('subscriptions/listen')
    const headers: Record<string, string> = stateless ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' } : {}
    const response = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { ...CLIENT_HEADERS, ...headers }, body })
    const text = await response.text()
    t.equal(response.status, 400)
    t.match(JSON.parse(text), { jsonrpc: '2.0', id: null, error: { code: RpcCode.InvalidRequest } })
    t.ok(text.length < 1024, 'the answer does not carry the id')
  }
  const atBound = await inject(gateway, { jsonrpc: '2.0', id: 'i'.repeat(MAX_ID_LENGTH), method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } })
  t.equal(atBound.statusCode, 200, `an id of ${MAX_ID_LENGTH} characters is served`)
})
