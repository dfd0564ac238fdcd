/**
 * A property over HTTP bodies posted to a real gateway (issue 16, the resilience suite): JSON-RPC
 * messages with random ids, methods and params, deep nesting, huge number literals, raw text, bytes
 * that are not UTF-8 and bodies over `body_limit`, on a session, on the stateless wire and on neither,
 * ten at a time over kept-alive connections. Whatever arrives: no crash, no 5xx but 503, every answer
 * a well-formed JSON-RPC result or error with the request's id (null when the body has no readable
 * one), and the event loop never blocked over the bound.
 *
 * A second property posts bodies within the default `body_limit` (4 MiB) made of many small
 * containers: empty objects or arrays by the million, array trees just under `json_depth`, one object
 * of many keys, long arrays of numbers. JSON.parse alone holds the loop for up to a second on them, so
 * the loop bound holds only because `limits.json_values` refuses them before parsing (issue 26).
 */
import fc from 'fast-check'
import t from 'tap'
import { CLIENT_HEADERS, socketGateway } from '../fixtures/transport-gateway.ts'
import { CaseFailure, checkResponse, envelope, fuzz, idArb, idFor, METHODS, nested, paramsArb, parsed, STATELESS } from './fuzz-kit.ts'

const FOUR_MIB = 4 * 1024 * 1024

t.setTimeout(180_000)
const BODY_LIMIT = 65_536

const caseArb = fc.record({
  shape: fc.constantFrom('message', 'message', 'message', 'message', 'deep', 'raw', 'bytes', 'hugeNumber', 'oversize', 'array'),
  id: fc.option(idArb, { nil: undefined }),
  method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 30 })),
  params: paramsArb,
  stateless: fc.boolean(),
  session: fc.constantFrom('valid', 'none', 'bogus'),
  depth: fc.integer({ min: 0, max: 3000 }),
  open: fc.constantFrom('[' as const, '{"a":' as const),
  raw: fc.string({ maxLength: 200, unit: 'binary' }),
  bytes: fc.uint8Array({ maxLength: 200 }),
  digits: fc.integer({ min: 17, max: 400 }),
})
type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never

function bodyOf(c: Case): string | Uint8Array {
  const message: Record<string, unknown> = { jsonrpc: '2.0', method: c.method }
  if (c.id !== undefined) message.id = c.id
  let params = c.params
  if (c.stateless && (params === undefined || (typeof params === 'object' && params !== null && !Array.isArray(params)))) {
    params = { ...(params as object | undefined), _meta: envelope }
  }
  if (params !== undefined) message.params = params
  switch (c.shape) {
    case 'message':
      return JSON.stringify(message)
    case 'array':
      return JSON.stringify([message]) // a batch: refused whole
    case 'deep':
      return JSON.stringify({ ...message, params: { deep: 0 } }).replace('"deep":0', `"deep":${nested(c.depth, c.open)}`)
    case 'hugeNumber':
      return `{"jsonrpc":"2.0","id":${'9'.repeat(c.digits)},"method":${JSON.stringify(c.method)}}`
    case 'oversize':
      return JSON.stringify({ ...message, params: { pad: 'x'.repeat(BODY_LIMIT) } })
    case 'raw':
      return c.raw
    default: {
      // Bytes that are mostly not UTF-8, inside a message whose id is readable.
      const head = Buffer.from('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"')
      return Buffer.concat([head, Buffer.from(c.bytes), Buffer.from('"}}')])
    }
  }
}

t.test('HTTP bodies and JSON-RPC messages', async (t) => {
  const gateway = await socketGateway(t, {}, { body_limit: BODY_LIMIT, limits: { sessions_per_principal: 0 } })
  const url = `${gateway.url}/mcp`
  const init = await fetch(url, { method: 'POST', headers: CLIENT_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }) })
  const session = init.headers.get('mcp-session-id')!
  await init.text()
  const statuses = new Map<number, number>()

  const one = async (c: Case): Promise<void> => {
    const payload = bodyOf(c)
    const headers: Record<string, string> = { ...CLIENT_HEADERS }
    if (c.stateless) Object.assign(headers, { 'mcp-protocol-version': STATELESS, 'mcp-method': c.method.replace(/[^\x21-\x7e]/g, '') || 'x' })
    if (c.session === 'valid') headers['mcp-session-id'] = session
    if (c.session === 'bogus') headers['mcp-session-id'] = 'no-such-session'
    const body = typeof payload === 'string' ? payload : new Blob([new Uint8Array(payload)])
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) })
    const text = await response.text()
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    if (response.status >= 500 && response.status !== 503) throw new CaseFailure(`HTTP ${response.status}`, c, text)
    if (response.status === 202) {
      if (text !== '') throw new CaseFailure('202 with a body', c, text)
      return
    }
    const json = response.headers.get('content-type')?.startsWith('text/event-stream')
      ? text.split('\n').filter((line) => line.startsWith('data: ')).at(-1)?.slice(6) ?? ''
      : text
    // A body over body_limit is not read, so its id is unknown (null); one that is not JSON may still
    // have an id the gateway could read before failing: any readable id then.
    const message = parsed(payload)
    checkResponse(json, c.shape === 'oversize' ? null : message === undefined ? undefined : idFor(message), c)
  }

  await fuzz(t, { name: 'HTTP bodies', arbitrary: caseArb, cases: 3200, batch: 10, run: (batch) => Promise.all(batch.map(one)).then(() => undefined) })
  t.comment(`statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`)
  const alive = await fetch(url, { method: 'POST', headers: { ...CLIENT_HEADERS, 'mcp-session-id': session }, body: '{"jsonrpc":"2.0","id":"last","method":"ping"}' })
  t.same(await alive.json(), { jsonrpc: '2.0', id: 'last', result: {} }, 'the gateway serves on, the session too')
})

/** One unit of a body made of many small containers (or values), repeated with commas. */
const UNITS = {
  emptyObjects: () => '{}',
  emptyArrays: () => '[]',
  tree: (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`,
  smallObjects: () => '{"a":[0,{}]}',
  numbers: () => '0',
  shortStrings: () => '"a"',
} as const

const containersArb = fc.record({
  unit: fc.constantFrom(...(Object.keys(UNITS) as (keyof typeof UNITS)[]), 'keys' as const),
  depth: fc.integer({ min: 2, max: 124 }),
  bytes: fc.integer({ min: 256 * 1024, max: FOUR_MIB - 1024 }),
  id: fc.oneof(fc.integer({ min: 0, max: 1e6 }), fc.string({ maxLength: 12 })),
  idLast: fc.boolean(),
  way: fc.constantFrom('session', 'stateless', 'initialize'),
})
type ContainersCase = typeof containersArb extends fc.Arbitrary<infer T> ? T : never

/** The body of a case, built by repetition (no JSON.parse or stringify of its bulk in this process, whose loop is watched). */
function containersBody(c: ContainersCase): string {
  let bulk: string
  if (c.unit === 'keys') {
    const keys: string[] = []
    for (let size = 2, i = 0; size < c.bytes; i++) {
      const key = `"k${i}":0`
      keys.push(key)
      size += key.length + 1
    }
    bulk = `{${keys.join(',')}}`
  } else {
    const unit = UNITS[c.unit](c.depth)
    bulk = `[${`${unit},`.repeat(Math.max(0, Math.floor(c.bytes / (unit.length + 1)) - 1))}${unit}]`
  }
  const method = c.way === 'initialize' ? 'initialize' : 'tools/call'
  const meta = c.way === 'stateless' ? `,"_meta":${JSON.stringify(envelope)}` : ''
  const params = c.way === 'initialize'
    ? `{"protocolVersion":"2025-11-25","capabilities":{"x":${bulk}}}`
    : `{"name":"echo","arguments":{"message":"hi","bulk":${bulk}}${meta}}`
  const id = JSON.stringify(c.id)
  return c.idLast
    ? `{"jsonrpc":"2.0","method":"${method}","params":${params},"id":${id}}`
    : `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`
}

t.test('in-limit bodies of many small containers: refused before parsing, the loop never held', async (t) => {
  const gateway = await socketGateway(t, {}, { limits: { sessions_per_principal: 0 } })
  const url = `${gateway.url}/mcp`
  const init = await fetch(url, { method: 'POST', headers: CLIENT_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }) })
  const session = init.headers.get('mcp-session-id')!
  await init.text()
  const statuses = new Map<number, number>()

  const one = async (c: ContainersCase): Promise<void> => {
    const body = containersBody(c)
    if (body.length > FOUR_MIB) throw new CaseFailure(`a body of ${body.length} bytes: over body_limit, the case is wrong`, c, '')
    const headers: Record<string, string> = { ...CLIENT_HEADERS }
    if (c.way === 'stateless') Object.assign(headers, { 'mcp-protocol-version': STATELESS, 'mcp-method': 'tools/call', 'mcp-name': 'echo' })
    if (c.way === 'session') headers['mcp-session-id'] = session
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) })
    const text = await response.text()
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    if (response.status >= 500 && response.status !== 503) throw new CaseFailure(`HTTP ${response.status}`, c, text)
    const json = response.headers.get('content-type')?.startsWith('text/event-stream')
      ? text.split('\n').filter((line) => line.startsWith('data: ')).at(-1)?.slice(6) ?? ''
      : text
    checkResponse(json, c.id, c)
  }

  await fuzz(t, { name: 'many small containers', arbitrary: containersArb, cases: 48, batch: 4, run: (batch) => Promise.all(batch.map(one)).then(() => undefined) })
  t.comment(`statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`)
})
