// The call events as a subscriber (a log phase, an audit sink) sees them: one per finished call, on
// both HTTP paths, in batches after the answers left, with a session hash and never a session id.
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ERROR_RING_SIZE, paramsOf, sessionHash, type CallEvent } from '../../gateway/events/call-events.ts'
import { gatewayWith } from '../e2e/harness.ts'
import { post, rawSession } from '../e2e/sse-reader.ts'

const echo = fileURLToPath(new URL('../../handlers/echo.ts', import.meta.url))
const route = { location: '/mcp', handler: echo, server: { name: 'echo', version: '1.0.0' } }

t.test('one event per call, delivered off the request path', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/mcp`
  const sessionId = await rawSession(url)
  const seen: CallEvent[] = []
  let batches = 0
  const paramsSeen: unknown[] = []
  const unsubscribe = gateway.events.subscribe((events) => {
    batches++
    seen.push(...events)
    for (const event of events) paramsSeen.push(paramsOf(event))
  })
  await (await post(url, sessionId, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'secret-argument' } } })).text()
  await (await post(url, sessionId, { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'nope' } })).text()
  // Stateless (2026-07-28): no session.
  await (await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  })).text()
  await new Promise((resolve) => setImmediate(resolve))
  unsubscribe()
  const call = seen.find((event) => event.method === 'tools/call')!
  t.match(call, { route: '/mcp', component: 'echo', outcome: 'ok', error: undefined, upstream: undefined, generation: 0 })
  t.equal(call.session, sessionHash(sessionId), 'the session, hashed')
  t.ok(call.durationMs >= 0)
  const failed = seen.find((event) => event.method === 'prompts/get')!
  t.match(failed, { component: '_other', outcome: 'error', error: 'invalid_params' })
  const stateless = seen.find((event) => event.method === 'tools/list')
  t.ok(stateless, 'the stateless call too')
  t.equal(stateless?.session, '', 'without a session')
  const text = JSON.stringify(seen)
  t.notOk(text.includes(sessionId), 'no session id')
  t.notOk(text.includes('secret-argument'), 'no argument value')
  t.ok(batches >= 1 && batches <= seen.length, 'delivered in batches')
  t.same(gateway.events.recentErrors().map((event) => event.method), ['prompts/get'], 'the errors ring holds the failure')
  t.ok(ERROR_RING_SIZE > 0)
  // A subscriber (the audit sink's digest) reads the params while it is handed the batch; after that the
  // event lets them go, so the errors ring never holds a request's params (they can be megabytes).
  t.match(paramsSeen[seen.indexOf(call)], { name: 'echo', arguments: { message: 'secret-argument' } }, 'a subscriber reads the params')
  t.equal(paramsOf(failed), undefined, 'the ring\'s event no longer holds them')
})
