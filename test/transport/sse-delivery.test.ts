/**
 * An SSE answer delivers every event written before its end, on every Node version: a tools/call with
 * five progress notifications gets all five and its result, read as curl reads it (one request on its
 * own connection, the body read to its end, no reconnection and no Last-Event-ID), so a client's
 * resumption cannot hide a lost event. On Node 22, `end()` on a corked response sent the terminating
 * chunk ahead of the corked events: the stream ended after the first and the result never came.
 * Served by the hot path and by Fastify's (`trust_proxy: true` keeps the hot path out), with and
 * without resumability, on a session and on the stateless wire.
 */
import { request as httpRequest } from 'node:http'
import t, { type Test } from 'tap'
import { ACCEPT_BOTH, socketGateway } from '../fixtures/transport-gateway.ts'

const SESSION_VERSION = '2025-11-25'
const STATELESS_VERSION = '2026-07-28'
const STEPS = 5

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One POST on a fresh connection, its body read to the end; a broken stream is a failure, not a retry. */
function post(url: string, body: object, headers: Record<string, string>): Promise<Answer> {
  const bytes = Buffer.from(JSON.stringify(body))
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/mcp`, {
      method: 'POST',
      agent: false,
      headers: { accept: ACCEPT_BOTH, 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers },
    }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }))
      response.on('error', reject)
    })
    request.setTimeout(10_000, () => request.destroy(new Error('no complete answer within 10 s')))
    request.on('error', reject)
    request.end(bytes)
  })
}

/** The JSON messages of an SSE body, in order (the priming event carries no data). */
function messages(body: string): { id?: unknown; method?: string; params?: { progress?: number; progressToken?: unknown }; result?: { content?: { text?: string }[] } }[] {
  const out = []
  for (const event of body.split('\n\n')) {
    const data = event.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n')
    if (data !== '') out.push(JSON.parse(data))
  }
  return out
}

function assertDelivered(t: Test, answer: Answer, id: number | string): void {
  t.equal(answer.status, 200)
  t.match(answer.headers['content-type'], /^text\/event-stream/, 'answered as SSE')
  const seen = messages(answer.body)
  const progress = seen.filter((message) => message.method === 'notifications/progress')
  t.same(progress.map((message) => message.params?.progress), [1, 2, 3, 4, 5], 'all five progress notifications, in order')
  t.ok(progress.every((message) => message.params?.progressToken === 'p'), 'each for the request\'s token')
  const last = seen.at(-1)
  t.equal(last?.id, id, 'the result comes last, for the request')
  t.equal(last?.result?.content?.[0]?.text, `counted to ${STEPS}`, 'the result itself')
  t.equal(seen.length, STEPS + 1, 'nothing else')
}

async function sessionOn(url: string): Promise<string> {
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: SESSION_VERSION, capabilities: {}, clientInfo: { name: 'curl-like', version: '1' } } }
  const answer = await post(url, initialize, { 'mcp-protocol-version': SESSION_VERSION })
  const id = answer.headers['mcp-session-id']
  if (typeof id !== 'string') throw new Error(`initialize answered ${answer.status}: ${answer.body}`)
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': SESSION_VERSION, 'mcp-session-id': id })
  return id
}

const countCall = (id: number, meta: object = {}) => ({
  jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'count', arguments: { steps: STEPS }, _meta: { progressToken: 'p', ...meta } },
})

const variants = [
  { name: 'hot path, resumable', top: {}, route: {} },
  { name: 'Fastify path, resumable', top: { trust_proxy: true }, route: {} },
  { name: 'hot path, not resumable', top: {}, route: { resumability: false } },
  { name: 'Fastify path, not resumable', top: { trust_proxy: true }, route: { resumability: false } },
]

for (const variant of variants) {
  t.test(`a session's tools/call with five progress notifications delivers them all and its result (${variant.name})`, async (t) => {
    const gateway = await socketGateway(t, variant.route, variant.top)
    const sessionId = await sessionOn(gateway.url)
    // Several rounds: a lost end would show in the first, but the turn the result lands in varies.
    for (let round = 1; round <= 5; round++) {
      const answer = await post(gateway.url, countCall(round), { 'mcp-protocol-version': SESSION_VERSION, 'mcp-session-id': sessionId })
      assertDelivered(t, answer, round)
    }
  })
}

for (const variant of variants.slice(0, 2)) {
  t.test(`a stateless tools/call with five progress notifications delivers them all and its result (${variant.name})`, async (t) => {
    const gateway = await socketGateway(t, variant.route, variant.top)
    const envelope = { 'io.modelcontextprotocol/protocolVersion': STATELESS_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} }
    for (let round = 1; round <= 3; round++) {
      const answer = await post(gateway.url, countCall(round, envelope), { 'mcp-protocol-version': STATELESS_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'count' })
      assertDelivered(t, answer, round)
    }
  })
}
