// Resumability over raw HTTP: cut a stream after event k, resume with Last-Event-ID, receive exactly
// the events after k, in order, once. Also cancellation as the wire sees it.
import t from 'tap'
import { fixture, gatewayWith } from './harness.ts'
import { post, rawSession, SseReader } from './sse-reader.ts'

const route = { location: '/live', handler: fixture('live'), server: { name: 'live', version: '1.0.0' }, resumability: true }

function resume(url: string, sessionId: string, lastEventId: string): Promise<Response> {
  return fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': lastEventId } })
}

t.test('a POST stream cut after event k resumes with exactly the events after k', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  const cut = new AbortController()
  const response = await post(url, sessionId, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { steps: 6 }, _meta: { progressToken: 'p' } } }, cut.signal)
  t.equal(response.headers.get('content-type'), 'text/event-stream')
  const reader = new SseReader(response)
  const priming = (await reader.next())!
  t.equal(priming.data, '', 'priming event first')
  t.ok(priming.id, 'priming event has an id')
  t.equal(priming.retry, 1000, 'priming event carries retry')
  const first = (await reader.next())!
  const second = (await reader.next())!
  t.same([JSON.parse(first.data).params.progress, JSON.parse(second.data).params.progress], [1, 2])
  cut.abort()

  const resumed = await resume(url, sessionId, second.id!)
  t.equal(resumed.status, 200)
  const events = await new SseReader(resumed).rest()
  const messages = events.map((event) => JSON.parse(event.data))
  t.same(messages.slice(0, -1).map((message) => message.params.progress), [3, 4, 5, 6], 'the missed progress, in order, once')
  t.same(messages.at(-1), { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'done after 6 steps' }] } })
  t.same(new Set(events.map((event) => event.id)).size, events.length, 'ids are unique')
  t.ok(events.every((event) => event.id!.split('/')[0] === second.id!.split('/')[0]), 'every id names the same stream')
})

t.test('resuming a finished stream replays the rest and ends', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  const response = await post(url, sessionId, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'slow', arguments: { steps: 3 }, _meta: { progressToken: 1 } } })
  const all = await new SseReader(response).rest()
  t.equal(all.length, 5, 'priming, 3 progress, result')
  const replayed = await new SseReader(await resume(url, sessionId, all[1]!.id!)).rest()
  t.same(replayed.map((event) => event.id), all.slice(2).map((event) => event.id))
})

t.test('the standalone GET stream replays the notifications missed while cut', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  await (await post(url, sessionId, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'live://counter' } })).json()
  const cut = new AbortController()
  const stream = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId }, signal: cut.signal })
  const reader = new SseReader(stream)
  const priming = (await reader.next())!
  await (await post(url, sessionId, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'touch' } })).json()
  const update = (await reader.next())!
  t.equal(JSON.parse(update.data).method, 'notifications/resources/updated')
  t.ok(priming.id)
  cut.abort()
  await new Promise((resolve) => setTimeout(resolve, 50))
  // While no GET stream is open, the updates are logged for replay.
  for (const id of [3, 4]) await (await post(url, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'touch' } })).json()
  const resumed = new SseReader(await resume(url, sessionId, update.id!))
  const missed = [(await resumed.next())!, (await resumed.next())!]
  t.same(missed.map((event) => JSON.parse(event.data).method), ['notifications/resources/updated', 'notifications/resources/updated'])
  await post(url, sessionId, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'touch' } }).then((r) => r.json())
  const live = (await resumed.next())!
  t.equal(JSON.parse(live.data).method, 'notifications/resources/updated', 'then the live ones')
  await resumed.cancel()
})

t.test('an unknown Last-Event-ID is refused', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  t.equal((await resume(url, sessionId, 'nope')).status, 400)
  t.equal((await resume(url, sessionId, 'pzzz/99999')).status, 404)
})

t.test('cancelled request: the stream ends with no response', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  const response = await post(url, sessionId, { jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'slow', arguments: { steps: 50 }, _meta: { progressToken: 'c' } } })
  const reader = new SseReader(response)
  await reader.next() // priming
  await reader.next() // first progress
  const cancel = await post(url, sessionId, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1', reason: 'test' } })
  t.equal(cancel.status, 202)
  const rest = await reader.rest()
  t.notOk(rest.some((event) => event.data !== '' && 'id' in JSON.parse(event.data)), 'no response for the cancelled request')
})
