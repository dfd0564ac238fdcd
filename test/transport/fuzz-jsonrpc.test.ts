/**
 * A property over JSON-RPC bodies posted to a real gateway (issue 16, the resilience suite): random
 * nesting, ids (huge, fractional, unsafe, strings), methods, params, invalid UTF-8 and huge number
 * literals, on sessions, on the stateless wire and without either. Whatever arrives: no crash, no 5xx
 * but 503, and every answer a well-formed JSON-RPC result or error carrying the request's id when
 * the body has a readable one. The seed is printed; FUZZ_SEED and FUZZ_RUNS replay or widen a run.
 */
import fc from 'fast-check'
import t from 'tap'
import { CLIENT_HEADERS, socketGateway } from '../fixtures/transport-gateway.ts'

// fast-check's cases run one after another against one gateway; tap's 30 s default is short on a loaded machine.
t.setTimeout(180_000)

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000)
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)
const STATELESS = '2026-07-28'
const envelope = { 'io.modelcontextprotocol/protocolVersion': STATELESS, 'io.modelcontextprotocol/clientCapabilities': {} }
const METHODS = ['initialize', 'ping', 'tools/list', 'tools/call', 'prompts/get', 'resources/read', 'resources/subscribe',
  'completion/complete', 'logging/setLevel', 'server/discover', 'notifications/cancelled', 'notifications/initialized']
// subscriptions/listen is left out: its answer is a stream that stays open by design.

const idArb = fc.oneof(
  fc.integer(), fc.string({ maxLength: 20 }), fc.constantFrom(2 ** 53, 2 ** 53 + 2, -(2 ** 53) - 2, 1.5, 1e300, -0, null, true, 'x'.repeat(300)),
  fc.maxSafeInteger(),
)
const deepArb = fc.tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom('[', '{"a":')).map(([depth, open]) =>
  `${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`)
const paramsArb = fc.oneof(
  fc.constant(undefined),
  fc.dictionary(fc.constantFrom('name', 'uri', 'arguments', 'cursor', 'level', 'ref', 'argument', 'protocolVersion', 'capabilities', 'requestState', 'x'),
    fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom('echo', 'fail', 'leak', 'typo', 'test://broken', 'greet'))),
  fc.jsonValue({ maxDepth: 3 }),
)

/** One case: the text (or bytes) to post and the headers around it. */
const caseArb = fc.record({
  shape: fc.constantFrom('message', 'message', 'message', 'deep', 'raw', 'bytes', 'hugeNumber'),
  id: fc.option(idArb, { nil: undefined }),
  method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 30 })),
  params: paramsArb,
  stateless: fc.boolean(),
  session: fc.constantFrom('valid', 'none', 'bogus'),
  deep: deepArb,
  raw: fc.string({ maxLength: 200 }),
  bytes: fc.uint8Array({ maxLength: 200 }),
  digits: fc.integer({ min: 17, max: 400 }),
})

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never

function bodyOf(c: Case): { payload: string | Uint8Array; id: unknown } {
  const message: Record<string, unknown> = { jsonrpc: '2.0', method: c.method }
  if (c.id !== undefined) message.id = c.id
  let params = c.params
  if (c.stateless && (params === undefined || (typeof params === 'object' && params !== null && !Array.isArray(params)))) {
    params = { ...(params as object | undefined), _meta: envelope }
  }
  if (params !== undefined) message.params = params
  switch (c.shape) {
    case 'message':
      return { payload: JSON.stringify(message), id: c.id }
    case 'deep':
      return { payload: JSON.stringify({ ...message, params: { deep: 0 } }).replace('"deep":0', `"deep":${c.deep}`), id: c.id }
    case 'hugeNumber':
      return { payload: `{"jsonrpc":"2.0","id":${'9'.repeat(c.digits)},"method":${JSON.stringify(c.method)}}`, id: undefined }
    case 'raw':
      return { payload: c.raw, id: undefined }
    default: {
      // Bytes that are mostly not UTF-8, inside a message whose id is readable.
      const head = Buffer.from(`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"`)
      return { payload: Buffer.concat([head, Buffer.from(c.bytes), Buffer.from('"}}')]), id: 7 }
    }
  }
}

/** The id the answer must carry: the body's, when it is valid JSON whose top-level id is a string or a safe integer. */
function expectedId(payload: string | Uint8Array): unknown {
  try {
    const text = typeof payload === 'string' ? payload : new TextDecoder('utf-8', { fatal: true }).decode(payload)
    const value = JSON.parse(text)
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null
    const id = (value as { id?: unknown }).id
    return typeof id === 'string' || Number.isSafeInteger(id) ? id : null
  } catch {
    return undefined // unreadable: null, or whatever the gateway could still read
  }
}

t.test(`JSON-RPC bodies: ${RUNS} cases, seed ${SEED}`, async (t) => {
  t.comment(`fast-check seed ${SEED} (FUZZ_SEED=${SEED} replays this run)`)
  const gateway = await socketGateway(t)
  const url = `${gateway.url}/mcp`
  const init = await fetch(url, { method: 'POST', headers: CLIENT_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }) })
  const session = init.headers.get('mcp-session-id')!
  await init.text()
  const started = performance.now()
  const statuses = new Map<number, number>()

  await fc.assert(fc.asyncProperty(caseArb, async (c) => {
    const { payload } = bodyOf(c)
    const headers: Record<string, string> = { ...CLIENT_HEADERS }
    if (c.stateless) Object.assign(headers, { 'mcp-protocol-version': STATELESS, 'mcp-method': c.method.replace(/[^\x21-\x7e]/g, '') || 'x' })
    if (c.session === 'valid') headers['mcp-session-id'] = session
    if (c.session === 'bogus') headers['mcp-session-id'] = 'no-such-session'
    const body = typeof payload === 'string' ? payload : new Blob([new Uint8Array(payload)])
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) })
    const text = await response.text()
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    if (response.status >= 500 && response.status !== 503) throw new Error(`HTTP ${response.status}: ${text}`)
    if (response.status === 202) {
      if (text !== '') throw new Error(`202 with a body: ${text}`)
      return
    }
    const json = response.headers.get('content-type')?.startsWith('text/event-stream')
      ? text.split('\n').filter((line) => line.startsWith('data: ')).at(-1)?.slice(6) ?? ''
      : text
    const answer = JSON.parse(json) as Record<string, unknown>
    if (answer.jsonrpc !== '2.0') throw new Error(`not JSON-RPC 2.0: ${text}`)
    const error = answer.error as { code?: unknown; message?: unknown } | undefined
    if (('result' in answer) === (error !== undefined)) throw new Error(`neither or both of result and error: ${text}`)
    if (error !== undefined && (!Number.isInteger(error.code) || typeof error.message !== 'string')) throw new Error(`malformed error: ${text}`)
    const id = expectedId(payload)
    if (id !== undefined && answer.id !== id) throw new Error(`id ${JSON.stringify(answer.id)}, the request's was ${JSON.stringify(id)}: ${text}`)
    if (id === undefined && answer.id !== null && typeof answer.id !== 'string' && !Number.isSafeInteger(answer.id)) throw new Error(`bad id: ${text}`)
  }), { numRuns: RUNS, seed: SEED, endOnFailure: true })

  const seconds = (performance.now() - started) / 1000
  t.comment(`${RUNS} cases in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  t.ok(seconds < 60, 'within a minute')
  const alive = await fetch(url, { method: 'POST', headers: { ...CLIENT_HEADERS, 'mcp-session-id': session }, body: '{"jsonrpc":"2.0","id":"last","method":"ping"}' })
  t.same(await alive.json(), { jsonrpc: '2.0', id: 'last', result: {} }, 'the gateway serves on')
})
