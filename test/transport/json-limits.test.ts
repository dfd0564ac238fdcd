/**
 * Hostile JSON on every transport (issue 16, rows 2, 3 and 15): nesting deeper than `limits.json_depth`
 * is refused before JSON.parse sees it (so a 4 MB body of `[` cannot block the event loop), the
 * refusal echoes the request's id when the body has one, and ids that are not safe integers are
 * refused with -32600. The same answers on Streamable HTTP, WebSocket frames and stdio lines.
 */
import { once } from 'node:events'
import { PassThrough } from 'node:stream'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import t from 'tap'
import { WebSocket } from 'ws'
import { pino } from 'pino'
import { RpcCode } from '../../gateway/wire/errors.ts'
import { serveStdio } from '../../gateway/transport/stdio.ts'
import { assertRpcError, inject, injectGateway, socketGateway, CLIENT_HEADERS } from '../fixtures/transport-gateway.ts'

const STATELESS = '2026-07-28'
const envelope = { 'io.modelcontextprotocol/protocolVersion': STATELESS, 'io.modelcontextprotocol/clientCapabilities': {} }
const statelessHeaders = { 'mcp-protocol-version': STATELESS, 'mcp-method': 'tools/call', 'mcp-name': 'echo' }

/** `depth` nested arrays around 1 (depth 3: `[[[1]]]`). */
const nested = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`

/** A tools/call text whose arguments hold `deep` (JSON text) at `arguments.deep`; `extra` adds params. */
function deepCall(id: number | string, deep: string, extra = ''): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","deep":${deep}}${extra}}}`
}

/** Posts `body` and returns the answer with the longest event-loop stall seen meanwhile (the gateway is in this process). */
async function postTimed(url: string, body: Blob, headers: Record<string, string> = {}) {
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const response = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...CLIENT_HEADERS, ...headers }, body })
  const answer = await response.json()
  delay.disable()
  return { status: response.status, answer, stallMs: delay.max / 1e6 }
}

t.test('HTTP: a 4 MB body of nested [ is refused with 400 -32600 without blocking the event loop', async (t) => {
  const gateway = await socketGateway(t)
  const session = (await inject(gateway, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } })).headers['mcp-session-id'] as string
  // The yardstick: a well-formed body of the same size, a 4 MB tool argument, parsed and answered.
  const benign = new Blob([`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"${'x'.repeat(3_980_000)}"}}}`])
  await postTimed(gateway.url, benign, { 'mcp-session-id': session }) // warms the paths up
  const yardstick = await postTimed(gateway.url, benign, { 'mcp-session-id': session })
  t.equal(yardstick.status, 200)

  const hostile = new Blob(['['.repeat(1_990_000) + ']'.repeat(1_990_000)])
  await postTimed(gateway.url, hostile)
  const refused = await postTimed(gateway.url, hostile)
  t.equal(refused.status, 400)
  t.match(refused.answer, { jsonrpc: '2.0', id: null, error: { code: RpcCode.InvalidRequest, message: /nest/i } })
  t.comment(`longest event-loop stall: ${refused.stallMs.toFixed(0)} ms for 4 MB of [, ${yardstick.stallMs.toFixed(0)} ms for a 4 MB argument`)
  // JSON.parse alone takes seconds on this input (3 to 6 s measured); the scans take a few ms per MiB.
  t.ok(refused.stallMs < Math.max(250, 3 * yardstick.stallMs), `no longer a stall than a well-formed body of that size causes (${refused.stallMs.toFixed(0)} ms)`)

  const unclosed = await postTimed(gateway.url, new Blob(['['.repeat(3_000_000)]))
  t.equal(unclosed.status, 400, 'unterminated nesting is refused the same way')
  t.match(unclosed.answer, { id: null, error: { code: RpcCode.InvalidRequest } })
})

t.test('HTTP: nesting over the limit inside a request echoes its id; at the limit it is served', async (t) => {
  const gateway = await injectGateway(t, {}, { limits: { json_depth: 32 } })
  const session = (await inject(gateway, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } })).headers['mcp-session-id'] as string
  const deep = await inject(gateway, deepCall(7, nested(40)), { 'mcp-session-id': session })
  const error = assertRpcError(t, deep, 400, RpcCode.InvalidRequest, 7)
  t.match(error.message, /32/, 'the message names the limit')
  const idLast = `{"jsonrpc":"2.0","method":"tools/call","params":{"deep":${nested(5000)}},"id":"late"}`
  assertRpcError(t, await inject(gateway, idLast, { 'mcp-session-id': session }), 400, RpcCode.InvalidRequest, 'late')
  const brackets = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"message":"${'['.repeat(100)}"}}}`
  const inString = await inject(gateway, brackets, { 'mcp-session-id': session })
  t.equal(inString.statusCode, 200, 'brackets inside strings do not count')
  // The message itself is depth 3 ({ params { arguments { deep: …), so 29 nested arrays reach 32.
  const atLimit = await inject(gateway, deepCall(9, nested(29)), { 'mcp-session-id': session })
  t.equal(atLimit.statusCode, 200, 'nesting at the limit is served')
  t.match(atLimit.json(), { id: 9, result: { content: [{ text: 'Tool echo: hi' }] } })
})

t.test('stateless: deep params, with or without a requestState, are a well-formed error with the id', async (t) => {
  const gateway = await injectGateway(t)
  for (const state of ['', ',"requestState":"eyJ4IjoxfQ.c2ln"']) {
    const text = `{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","deep":${nested(20_000)}}${state},"_meta":${JSON.stringify(envelope)}}}`
    const response = await inject(gateway, text, statelessHeaders)
    const error = assertRpcError(t, response, 400, RpcCode.InvalidRequest, 's1')
    t.notMatch(error.message, /call stack|Maximum/, 'no internal text')
  }
})

t.test('ids that are not safe integers are refused with -32600', async (t) => {
  const gateway = await injectGateway(t)
  for (const id of ['9007199254740993', '1e400', '-9007199254740993', '1.5']) {
    const text = `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`
    const response = await inject(gateway, text)
    assertRpcError(t, response, 400, RpcCode.InvalidRequest, null)
  }
  const safe = await inject(gateway, '{"jsonrpc":"2.0","id":9007199254740991,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}')
  t.equal(safe.statusCode, 200, 'the largest safe integer is an id')
  t.match(safe.body, /"id":9007199254740991\b/, 'echoed exactly')
})

/** A raw WebSocket on the route; `next()` is the next message the server sends, parsed. */
async function rawSocket(t: { teardown(fn: () => unknown): void }, url: string) {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/mcp`, 'mcp')
  t.teardown(() => ws.terminate())
  const queue: unknown[] = []
  const waiting: ((message: unknown) => void)[] = []
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString())
    const waiter = waiting.shift()
    if (waiter !== undefined) waiter(message)
    else queue.push(message)
  })
  await once(ws, 'open')
  return {
    send: (text: string) => ws.send(text),
    next: () => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise<unknown>((resolve) => waiting.push(resolve))),
  }
}

t.test('WebSocket frames: the same refusals, with the id', async (t) => {
  const gateway = await socketGateway(t, { transports: ['streamable_http', 'websocket'] }, { limits: { json_depth: 32 } })
  const ws = await rawSocket(t, gateway.url)
  ws.send(deepCall(3, nested(50_000)))
  t.match(await ws.next(), { jsonrpc: '2.0', id: 3, error: { code: RpcCode.InvalidRequest } }, 'deep frame')
  ws.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}')
  t.match(await ws.next(), { id: null, error: { code: RpcCode.InvalidRequest } }, 'unsafe id')
  ws.send('{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}')
  t.match(await ws.next(), { id: 4, result: { protocolVersion: '2025-11-25' } }, 'the connection still serves')
  ws.send(`{"jsonrpc":"2.0","id":"st","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","deep":${nested(20_000)}},"requestState":"x.y","_meta":${JSON.stringify(envelope)}}}`)
  t.match(await ws.next(), { id: 'st', error: { code: RpcCode.InvalidRequest } }, 'deep stateless frame')
})

t.test('stdio lines: the same refusals, with the id', async (t) => {
  const gateway = await injectGateway(t, {}, { limits: { json_depth: 32 } })
  const input = new PassThrough()
  const output = new PassThrough()
  const server = serveStdio(gateway.endpoints.get('/mcp')!, { input, output, maxMessageSize: 4 << 20, logger: pino({ level: 'silent' }) })
  t.teardown(() => {
    input.end()
    return server.done
  })
  let buffered = ''
  const lines: string[] = []
  output.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      lines.push(buffered.slice(0, newline))
      buffered = buffered.slice(newline + 1)
    }
  })
  const next = async (): Promise<unknown> => {
    while (lines.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    return JSON.parse(lines.shift()!)
  }
  input.write(`${deepCall('d', nested(50_000))}\n`)
  t.match(await next(), { jsonrpc: '2.0', id: 'd', error: { code: RpcCode.InvalidRequest } }, 'deep line')
  input.write('{"jsonrpc":"2.0","id":1e400,"method":"ping"}\n')
  t.match(await next(), { id: null, error: { code: RpcCode.InvalidRequest } }, 'unsafe id')
  input.write(`{"jsonrpc":"2.0","id":"st","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","deep":${nested(20_000)}},"requestState":"x.y","_meta":${JSON.stringify(envelope)}}}\n`)
  t.match(await next(), { id: 'st', error: { code: RpcCode.InvalidRequest } }, 'deep stateless line')
})
