/**
 * A property over the HTTP headers a client sends (issue 16, the resilience suite): the verb, the
 * session id, MCP-Protocol-Version, Accept, Content-Type, Host (also twice) and Origin, Last-Event-ID,
 * and the 2026-07-28 Mcp-Method and Mcp-Name, each fine, missing or hostile, around a JSON-RPC body.
 * Whatever arrives: no crash, no 5xx but 503, every body a well-formed JSON-RPC message (a refusal
 * made before the body is read carries id null, an answer the request's id), a 202 without a body,
 * and the event loop never blocked over the bound.
 */
import fc from 'fast-check'
import { Agent, request, type IncomingMessage } from 'node:http'
import t from 'tap'
import { CLIENT_HEADERS, initializeRequest, socketGateway } from '../fixtures/transport-gateway.ts'
import { CaseFailure, checkResponse, envelope, fuzz, idArb, idFor, STATELESS } from './fuzz-kit.ts'

t.setTimeout(180_000)

/** Header values: printable ASCII and Latin-1 (what an HTTP client can put on the wire), or nothing. */
const junk = fc.string({ minLength: 0, maxLength: 120, unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff })).map((code) => String.fromCharCode(code)) })
  .map((value) => value.trim())
/** Mostly the first value (what a conforming client sends), then the others, then junk. */
const either = <T extends string>(good: T, ...others: T[]) => fc.oneof({ arbitrary: fc.constant(good), weight: 6 }, { arbitrary: fc.constantFrom(good, ...others), weight: 2 }, { arbitrary: junk, weight: 1 })
/** Sent one time in `freq`, else absent. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, freq = 4) => fc.option(arbitrary, { nil: undefined, freq })

const caseArb = fc.record({
  verb: fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'GET', 'DELETE', 'PUT', 'OPTIONS', 'PATCH'),
  session: fc.constantFrom('valid', 'valid', 'valid', 'none', 'none', 'bogus', 'junk', 'long'),
  junkSession: junk,
  version: fc.option(either('2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', STATELESS, '2099-01-01'), { nil: undefined, freq: 8 }),
  accept: fc.option(either('application/json, text/event-stream', 'application/json', 'text/event-stream', '*/*', 'application/*;q=0', 'text/html'), { nil: undefined, freq: 8 }),
  contentType: fc.option(either('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data'), { nil: undefined, freq: 8 }),
  host: fc.oneof({ arbitrary: fc.constant('self' as const), weight: 12 }, { arbitrary: fc.constantFrom('localhost' as const, 'evil' as const, 'twice' as const, 'junk' as const), weight: 3 }),
  origin: sometimes(fc.constantFrom('self', 'self', 'self', 'evil', 'null', 'junk')),
  lastEventId: sometimes(either('stream-1:5', '0', '1', '99999999999999999999', '')),
  mcpMethod: sometimes(fc.oneof({ arbitrary: fc.constant('same'), weight: 3 }, { arbitrary: junk, weight: 1 }), 2),
  mcpName: sometimes(fc.oneof({ arbitrary: fc.constant('same'), weight: 3 }, { arbitrary: junk, weight: 1 }), 2),
  method: fc.constantFrom('ping', 'tools/list', 'tools/call', 'prompts/get', 'resources/read', 'initialize', 'notifications/initialized'),
  name: fc.constantFrom('echo', 'count', 'greet', 'test://broken', 'nothing'),
  id: fc.option(idArb, { nil: undefined }),
  stateless: fc.boolean(),
})
type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never

interface Answer { status: number; headers: IncomingMessage['headers']; body: string }

t.test('HTTP headers', async (t) => {
  const gateway = await socketGateway(t, {}, { limits: { sessions_per_principal: 0 } })
  const { port } = new URL(gateway.url)
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  t.teardown(() => agent.destroy())

  const newSession = async (): Promise<string> => {
    const response = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: CLIENT_HEADERS, body: JSON.stringify(initializeRequest()) })
    await response.text()
    return response.headers.get('mcp-session-id')!
  }
  const valid = await newSession()

  /** Sends one case; a 200 event stream is read until its first event (or 300 ms) and then cut: it stays open by design. */
  const send = (raw: string[], verb: string, body: string | undefined): Promise<Answer> => new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: '/mcp', method: verb, headers: raw, setHost: false, agent, timeout: 10_000 }, (incoming) => {
      let text = ''
      incoming.setEncoding('utf8')
      const done = (): void => resolve({ status: incoming.statusCode!, headers: incoming.headers, body: text })
      if (incoming.statusCode === 200 && String(incoming.headers['content-type']).startsWith('text/event-stream')) {
        const cut = setTimeout(() => { incoming.destroy(); done() }, 300)
        incoming.on('data', (chunk: string) => {
          text += chunk
          if (text.includes('\n\n')) { clearTimeout(cut); incoming.destroy(); done() }
        })
        incoming.on('end', () => { clearTimeout(cut); done() })
        return
      }
      incoming.on('data', (chunk: string) => (text += chunk))
      incoming.on('end', done)
      incoming.on('error', reject)
    })
    outgoing.on('timeout', () => outgoing.destroy(new Error('no answer within 10 s')))
    outgoing.on('error', reject)
    outgoing.end(body)
  })

  const statuses = new Map<number, number>()
  const one = async (c: Case): Promise<void> => {
    const message: Record<string, unknown> = { jsonrpc: '2.0', method: c.method }
    if (c.id !== undefined) message.id = c.id
    const params: Record<string, unknown> = c.method === 'initialize' ? { protocolVersion: '2025-11-25', capabilities: {} } : { name: c.name, uri: c.name, arguments: { message: 'hi', name: 'Ada' } }
    if (c.stateless) params._meta = envelope
    message.params = params
    const body = c.verb === 'POST' || c.verb === 'PUT' || c.verb === 'PATCH' ? JSON.stringify(message) : undefined

    const raw: string[] = []
    const self = `127.0.0.1:${port}`
    if (c.host === 'twice') raw.push('Host', self, 'Host', 'evil.example')
    else raw.push('Host', { self, localhost: `localhost:${port}`, evil: 'evil.example', junk: c.junkSession || 'x' }[c.host])
    const session = { valid, none: undefined, bogus: 'no-such-session', junk: c.junkSession, long: 'a'.repeat(4000) }[c.session]
    if (session !== undefined && session !== '') raw.push('Mcp-Session-Id', c.verb === 'DELETE' && c.session === 'valid' ? await newSession() : session)
    if (c.version !== undefined) raw.push('MCP-Protocol-Version', c.version)
    if (c.accept !== undefined) raw.push('Accept', c.accept)
    if (c.contentType !== undefined && body !== undefined) raw.push('Content-Type', c.contentType)
    if (c.origin !== undefined) raw.push('Origin', { self: `http://${self}`, evil: 'http://evil.example', null: 'null', junk: c.junkSession }[c.origin])
    if (c.lastEventId !== undefined) raw.push('Last-Event-ID', c.lastEventId)
    if (c.mcpMethod !== undefined) raw.push('Mcp-Method', c.mcpMethod === 'same' ? c.method : c.mcpMethod)
    if (c.mcpName !== undefined) raw.push('Mcp-Name', c.mcpName === 'same' ? c.name : c.mcpName)

    const answer = await send(raw, c.verb, body)
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    if (answer.status >= 500 && answer.status !== 503) throw new CaseFailure(`HTTP ${answer.status}`, c, answer.body)
    if (answer.status === 202 || answer.status === 204) {
      if (answer.body !== '') throw new CaseFailure(`${answer.status} with a body`, c, answer.body)
      return
    }
    if (String(answer.headers['content-type']).startsWith('text/event-stream')) {
      for (const line of answer.body.split('\n')) {
        if (line.startsWith('data: ') && line.length > 6) checkResponse(line.slice(6), answer.status === 200 && body !== undefined ? idFor(message) : undefined, c)
      }
      return
    }
    if (c.verb === 'DELETE' && answer.status === 200 && answer.body === '') return
    if (!/^application\/json\b/.test(String(answer.headers['content-type']))) throw new CaseFailure(`HTTP ${answer.status} with content-type ${String(answer.headers['content-type'])}`, c, answer.body)
    const reply = checkResponse(answer.body, undefined, c)
    // An answer carries the request's id; a refusal made before the body was read carries null.
    const id = body === undefined ? null : idFor(message)
    if (reply.id !== id && !(answer.status >= 400 && reply.id === null)) throw new CaseFailure(`HTTP ${answer.status} with id ${JSON.stringify(reply.id)}, the request's was ${JSON.stringify(id)}`, c, answer.body)
  }

  await fuzz(t, { name: 'HTTP headers', arbitrary: caseArb, cases: 3200, batch: 10, run: (batch) => Promise.all(batch.map(one)).then(() => undefined) })
  t.comment(`statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`)
  const alive = await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { ...CLIENT_HEADERS, 'mcp-session-id': valid }, body: '{"jsonrpc":"2.0","id":"last","method":"ping"}' })
  t.same(await alive.json(), { jsonrpc: '2.0', id: 'last', result: {} }, 'the gateway serves on, the session too')
})
