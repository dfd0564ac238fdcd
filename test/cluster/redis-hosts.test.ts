// Two gateway processes (two "hosts") on two ports sharing one Redis, behind a load balancer without
// sticky sessions: any process serves any request of any session, a stream cut on one resumes on the
// other, a killed process loses no session, and a Redis outage is a 503 that heals by itself.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { post, rawSession, SseReader } from '../e2e/sse-reader.ts'
import { startRedis } from '../store/redis-server.ts'
import { liveRoute, startGatewayProcess, type GatewayProcess } from './gateway-process.ts'
import { nonStickySession } from './non-sticky.ts'
import { roundRobin } from './round-robin.ts'

// Real processes start slowly (each compiles its TypeScript): more than tap's 30 s for the file.
t.setTimeout(180_000)
const redis = await startRedis(t)
// Two gateway processes on one Redis, for the whole file; the test that kills one comes last.
const store = { type: 'redis', url: redis.url, key_prefix: 'hosts:', command_timeout: 1, connect_timeout: 1 }
const [a, b] = (await Promise.all([
  startGatewayProcess(t, { store, routes: [liveRoute] }),
  startGatewayProcess(t, { store, routes: [liveRoute] }),
])) as [GatewayProcess, GatewayProcess]

t.test('a whole session over two hosts, request by request alternating', async (t) => {
  const balancer = await roundRobin(t, [a.url, b.url])
  await nonStickySession(t, { balancer, direct: [a.url, b.url], processes: 2 })
})

t.test('a POST stream cut after event k resumes on the other host with exactly k+1…, in order, once', async (t) => {
  const sessionId = await rawSession(`${a.url}/live`)
  const cut = new AbortController()
  const response = await post(`${a.url}/live`, sessionId, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { steps: 8 }, _meta: { progressToken: 'p' } } }, cut.signal)
  const reader = new SseReader(response)
  const priming = (await reader.next())!
  t.equal(priming.data, '', 'the priming event')
  const first = (await reader.next())!
  const k = (await reader.next())!
  t.same([first, k].map((event) => JSON.parse(event.data).params.progress), [1, 2])
  cut.abort()

  const resumed = await fetch(`${b.url}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': k.id! } })
  t.equal(resumed.status, 200, 'the other host resumes the stream')
  const events = await new SseReader(resumed).rest()
  const messages = events.map((event) => JSON.parse(event.data))
  t.same(messages.slice(0, -1).map((message) => message.params.progress), [3, 4, 5, 6, 7, 8], 'the missed events, then the live ones: in order, once')
  t.same(messages.at(-1), { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'done after 8 steps' }] } }, 'then the response, and the stream ends')
  t.equal(new Set(events.map((event) => event.id)).size, events.length, 'no id twice')
  const again = await fetch(`${a.url}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': k.id! } })
  t.same((await new SseReader(again).rest()).map((event) => event.id), events.map((event) => event.id), 'a later resume on the first host replays the same events')
})

t.test('the GET stream cut on one host resumes on the other: the missed notifications, then the live ones, once', async (t) => {
  const sessionId = await rawSession(`${a.url}/live`)
  const call = async (base: string, id: number, name: string, params: object = {}): Promise<void> => {
    await (await post(`${base}/live`, sessionId, { jsonrpc: '2.0', id, method: name === 'subscribe' ? 'resources/subscribe' : 'tools/call', params: name === 'subscribe' ? params : { name } })).text()
  }
  await call(b.url, 1, 'subscribe', { uri: 'live://counter' })
  const cut = new AbortController()
  const stream = await fetch(`${a.url}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId }, signal: cut.signal })
  const reader = new SseReader(stream)
  await reader.next() // priming
  await call(b.url, 2, 'touch')
  const seen = (await reader.next())!
  t.equal(JSON.parse(seen.data).method, 'notifications/resources/updated', 'a touch on b reached the stream held by a')
  cut.abort()
  await sleep(100)
  await call(a.url, 3, 'touch')
  await call(b.url, 4, 'touch')
  const resumed = new SseReader(await fetch(`${b.url}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': seen.id! } }))
  const missed = [(await resumed.next())!, (await resumed.next())!]
  t.same(missed.map((event) => JSON.parse(event.data).method), ['notifications/resources/updated', 'notifications/resources/updated'], 'the two missed while cut')
  await call(a.url, 5, 'touch')
  const live = (await resumed.next())!
  t.equal(JSON.parse(live.data).method, 'notifications/resources/updated', 'then a live one, from the other host')
  const ids = [seen, ...missed, live].map((event) => event.id)
  t.equal(new Set(ids).size, 4, 'no event twice')
  await resumed.cancel()
})

t.test('Redis stopped: 503 with a JSON-RPC error and /readyz not ready; restarted: service resumes by itself', async (t) => {
  const url = `${a.url}/live`
  const sessionId = await rawSession(url)
  await redis.stop()
  t.teardown(() => redis.start())
  // A record cached before the outage may serve one more request; once the gateway has seen the
  // connection drop (readyz says so) its cache is off and every request needs Redis.
  let ready = true
  for (let tries = 0; ready && tries < 50; tries++) {
    const probe = await fetch(`${a.url}/readyz`)
    ready = probe.status === 200
    await probe.text()
    if (ready) await sleep(20)
  }
  t.notOk(ready, '/readyz says not ready')
  const started = Date.now()
  const refused = await post(url, sessionId, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami' } })
  t.equal(refused.status, 503)
  t.same(await refused.json(), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Session store unavailable' } })
  const initialize = await post(url, undefined, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })
  t.equal(initialize.status, 503, 'a new session cannot start either')
  t.match(await initialize.json(), { error: { code: -32000 } })
  t.ok(Date.now() - started < 5000, 'refused within read_timeout')

  await redis.start()
  let back = false
  for (let tries = 0; !back && tries < 100; tries++) {
    const probe = await fetch(`${a.url}/readyz`)
    back = probe.status === 200
    await probe.text()
    if (!back) await sleep(100)
  }
  t.ok(back, '/readyz ready again, without a restart')
  const fresh = await rawSession(url)
  const answer = await post(url, fresh, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami' } })
  t.equal(answer.status, 200, 'a new session works')
  await answer.text()
})

t.test('a host killed with SIGKILL loses no session: the other host carries on with the same id', async (t) => {
  const balancer = await roundRobin(t, [a.url, b.url])
  const sessionId = await rawSession(`${balancer.url}/live`)
  await a.stop('SIGKILL')
  for (let n = 0; n < 3; n++) {
    const answer = await post(`${b.url}/live`, sessionId, { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'whoami' } })
    t.equal(answer.status, 200, 'served by the survivor')
    if (answer.status !== 200) t.comment(await answer.clone().text())
    await answer.text()
  }
})
