/**
 * The SSE side of the Streamable HTTP transport over real sockets: the standalone GET stream (priming,
 * one per session, ended by DELETE) and POST answers that switch to SSE when the request streams.
 */
import t from 'tap'
import type { Test } from 'tap'
import { RpcCode } from '../../gateway/wire/errors.ts'
import { parseEventId } from '../../gateway/store/store.ts'
import { SseReader, type SseEvent } from '../e2e/sse-reader.ts'
import { ACCEPT_BOTH, assertRpcError, initializeRequest, socketGateway, VERSION } from '../fixtures/transport-gateway.ts'

type SocketGateway = Awaited<ReturnType<typeof socketGateway>>

/** Rejects when `promise` takes longer than `ms`: a stream whose head never comes must fail the test, not hang it. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms) })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

async function session(gateway: SocketGateway): Promise<string> {
  const response = await post(gateway, undefined, initializeRequest())
  const sessionId = response.headers.get('mcp-session-id')!
  await response.text()
  await (await post(gateway, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' })).text()
  return sessionId
}

function post(gateway: SocketGateway, sessionId: string | undefined, body: object): Promise<Response> {
  const headers: Record<string, string> = { accept: ACCEPT_BOTH, 'content-type': 'application/json', 'mcp-protocol-version': VERSION }
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
  return fetch(`${gateway.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) })
}

/** Opens a GET stream; the connection is cut at teardown if the test left it open. */
function openGet(t: Test, gateway: SocketGateway, sessionId: string, extra: Record<string, string> = {}): Promise<Response> {
  const controller = new AbortController()
  t.teardown(() => controller.abort())
  return fetch(`${gateway.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, ...extra }, signal: controller.signal })
}

/** Subscribes the session to a resource and has the route announce an update, which goes to the GET stream. */
async function announceUpdate(gateway: SocketGateway, sessionId: string, uri = 'test://items/watched'): Promise<void> {
  await (await post(gateway, sessionId, { jsonrpc: '2.0', id: `sub-${uri}`, method: 'resources/subscribe', params: { uri } })).json()
  await gateway.endpoints.get('/mcp')!.resourceUpdated(uri)
}

/** Records intervals the gateway starts and clears (it keeps SSE streams alive with one). */
function watchIntervals(t: Test): Set<NodeJS.Timeout> {
  const live = new Set<NodeJS.Timeout>()
  const realSet = globalThis.setInterval
  const realClear = globalThis.clearInterval
  globalThis.setInterval = ((callback: () => void, ms?: number) => {
    const timer = realSet(callback, ms)
    live.add(timer)
    return timer
  }) as typeof setInterval
  globalThis.clearInterval = ((timer: NodeJS.Timeout | undefined) => {
    if (timer !== undefined) live.delete(timer)
    realClear(timer)
  }) as typeof clearInterval
  t.teardown(() => {
    globalThis.setInterval = realSet
    globalThis.clearInterval = realClear
  })
  return live
}

const message = (event: SseEvent | undefined) => JSON.parse(event!.data) as { id?: unknown; method?: string; params?: Record<string, unknown>; result?: unknown }

t.test('GET opens the standalone SSE stream with a priming event, then carries notifications', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const response = await within(openGet(t, gateway, sessionId), 2000, 'GET')
  t.equal(response.status, 200)
  t.equal(response.headers.get('content-type'), 'text/event-stream')
  t.equal(response.headers.get('mcp-session-id'), sessionId)
  t.match(response.headers.get('cache-control'), /no-cache/)
  const reader = new SseReader(response)
  const priming = await within(reader.next(), 2000, 'priming event')
  t.equal(priming?.data, '', 'the priming event carries no data')
  t.ok(priming?.id !== undefined && parseEventId(priming.id) !== undefined, 'it has a resumable event id')
  t.ok(Number.isInteger(priming?.retry) && priming!.retry! > 0, 'and a reconnect delay')

  await announceUpdate(gateway, sessionId)
  const update = await within(reader.next(), 2000, 'notification')
  t.same(message(update), { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'test://items/watched' } })
  t.equal(parseEventId(update!.id!)?.stream, parseEventId(priming!.id!)?.stream, 'on the same logged stream')
  t.not(update!.id, priming!.id)
})

t.test('one GET stream per session: a second concurrent GET is refused with 409', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const controller = new AbortController()
  const first = await fetch(`${gateway.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId }, signal: controller.signal })
  t.equal(first.status, 200)
  await new SseReader(first).next()

  const second = await openGet(t, gateway, sessionId)
  assertRpcError(t, { statusCode: second.status, headers: { 'content-type': second.headers.get('content-type') }, body: await second.text() }, 409, RpcCode.ServerError)
  t.equal((await post(gateway, sessionId, { jsonrpc: '2.0', id: 1, method: 'ping' })).status, 200, 'the session still serves')

  controller.abort()
  const deadline = Date.now() + 2000
  let again: Response
  do {
    await new Promise((resolve) => setTimeout(resolve, 20))
    again = await openGet(t, gateway, sessionId)
  } while (again.status === 409 && Date.now() < deadline)
  t.equal(again.status, 200, 'once the first stream is gone, a new GET is accepted')
})

t.test('HEAD does not open a stream (nor take the session’s one GET slot)', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const controller = new AbortController()
  t.teardown(() => controller.abort())
  const head = await within(fetch(`${gateway.url}/mcp`, { method: 'HEAD', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId }, signal: controller.signal }), 2000, 'HEAD')
  t.not(head.headers.get('content-type'), 'text/event-stream', 'no SSE answer to HEAD')
  const get = await within(openGet(t, gateway, sessionId), 2000, 'GET after HEAD')
  t.equal(get.status, 200, 'the GET stream is still free')
})

t.test('without resumability: the GET head arrives at once, with no priming event and no event ids', async (t) => {
  const gateway = await socketGateway(t, { resumability: false })
  const sessionId = await session(gateway)
  const response = await within(openGet(t, gateway, sessionId), 2000, 'GET response head')
  t.equal(response.status, 200)
  t.equal(response.headers.get('content-type'), 'text/event-stream')
  const reader = new SseReader(response)
  await announceUpdate(gateway, sessionId)
  const first = await within(reader.next(), 2000, 'first event')
  t.equal(message(first).method, 'notifications/resources/updated', 'the first event is the notification, not a priming event')
  t.equal(first?.id, undefined, 'no id: nothing to resume')
  t.equal(first?.retry, undefined)
})

t.test('resuming the GET stream with nothing missed sends the head at once, then follows live', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const controller = new AbortController()
  const first = await fetch(`${gateway.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId }, signal: controller.signal })
  const priming = await new SseReader(first).next()
  controller.abort()
  await new Promise((resolve) => setTimeout(resolve, 50))

  const resumed = await within(openGet(t, gateway, sessionId, { 'last-event-id': priming!.id! }), 2000, 'resumed GET head')
  t.equal(resumed.status, 200)
  const reader = new SseReader(resumed)
  await announceUpdate(gateway, sessionId)
  t.equal(message(await within(reader.next(), 2000, 'live event')).method, 'notifications/resources/updated')
})

t.test('DELETE ends an open GET stream and stops its keep-alive timer', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const intervals = watchIntervals(t)
  const reader = new SseReader(await openGet(t, gateway, sessionId))
  await reader.next()
  const keepAlive = [...intervals]
  t.ok(keepAlive.length >= 1, 'the open stream has a keep-alive timer')

  const deleted = await fetch(`${gateway.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } })
  t.equal(deleted.status, 200)
  t.equal(await within(reader.next(), 2000, 'end of stream'), undefined, 'the stream ends')
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(keepAlive.filter((timer) => intervals.has(timer)), [], 'no keep-alive timer left running')
})

t.test('a client that hangs up releases the GET stream and its timer', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const intervals = watchIntervals(t)
  const controller = new AbortController()
  const response = await fetch(`${gateway.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId }, signal: controller.signal })
  await new SseReader(response).next()
  const keepAlive = [...intervals]
  controller.abort()
  const deadline = Date.now() + 2000
  while (keepAlive.some((timer) => intervals.has(timer)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  t.same(keepAlive.filter((timer) => intervals.has(timer)), [], 'timer stopped')
  t.ok(await gateway.store.get(sessionId), 'the session outlives its stream')
})

t.test('a request that streams progress answers SSE: progress first, then the result, then the end', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const response = await post(gateway, sessionId, { jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'count', arguments: { steps: 3 }, _meta: { progressToken: 'tok' } } })
  t.equal(response.status, 200)
  t.equal(response.headers.get('content-type'), 'text/event-stream')
  t.equal(response.headers.get('mcp-session-id'), sessionId)
  const events = await within(new SseReader(response).rest(), 5000, 'the whole stream')

  const [priming, ...rest] = events
  t.equal(priming?.data, '', 'a priming event first')
  t.equal(priming?.retry, 1000)
  t.same(rest.slice(0, 3).map(message), [1, 2, 3].map((progress) => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: 'tok', progress, total: 3, message: `step ${progress}` },
  })), 'each progress notification, in order, with the request token')
  t.same(message(rest[3]), { jsonrpc: '2.0', id: 41, result: { content: [{ type: 'text', text: 'counted to 3' }] } }, 'the result last')
  t.equal(rest.length, 4, 'nothing after the result: the stream ended')
  const stream = parseEventId(priming!.id!)?.stream
  t.ok(events.every((event) => parseEventId(event.id!)?.stream === stream), 'every event id names the request’s stream')
  t.equal(new Set(events.map((event) => event.id)).size, events.length, 'ids do not repeat')
})

t.test('the same request without a progressToken answers plain JSON', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const response = await post(gateway, sessionId, { jsonrpc: '2.0', id: 42, method: 'tools/call', params: { name: 'count', arguments: { steps: 3 } } })
  t.equal(response.status, 200)
  t.match(response.headers.get('content-type'), /^application\/json\b/)
  t.same(await response.json(), { jsonrpc: '2.0', id: 42, result: { content: [{ type: 'text', text: 'counted to 3' }] } })
})

t.test('without resumability a streamed answer has no priming event and no ids', async (t) => {
  const gateway = await socketGateway(t, { resumability: false })
  const sessionId = await session(gateway)
  const response = await post(gateway, sessionId, { jsonrpc: '2.0', id: 43, method: 'tools/call', params: { name: 'count', arguments: { steps: 2 }, _meta: { progressToken: 7 } } })
  t.equal(response.headers.get('content-type'), 'text/event-stream')
  const events = await within(new SseReader(response).rest(), 5000, 'the whole stream')
  t.same(events.map((event) => message(event).method ?? message(event).id), ['notifications/progress', 'notifications/progress', 43])
  t.ok(events.every((event) => event.id === undefined && event.retry === undefined), 'no ids, no retry')
})

t.test('closing the gateway ends open streams', async (t) => {
  const gateway = await socketGateway(t)
  const sessionId = await session(gateway)
  const reader = new SseReader(await openGet(t, gateway, sessionId))
  await reader.next()
  const ended = within(reader.next(), 3000, 'end of stream')
  await within(gateway.close(), 3000, 'gateway.close()')
  t.equal(await ended, undefined)
})
