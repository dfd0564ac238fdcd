// A client that resumes a POST stream on another host follows the stream its producer still writes.
// When the producer goes (SIGKILL), nothing more will come: the follower must answer the request in
// its place after `producer_timeout` rather than keep the client waiting forever, while a producer
// that is only quiet (waiting on the client) is left alone.
import t from 'tap'
import { post, rawSession, SseReader } from '../e2e/sse-reader.ts'
import { startRedis } from '../store/redis-server.ts'
import { liveRoute, startGatewayProcess, type GatewayProcess } from './gateway-process.ts'

t.setTimeout(120_000)
const redis = await startRedis(t)
const store = { type: 'redis', url: redis.url, key_prefix: 'gone:' }
const route = { ...liveRoute, producer_timeout: 1 }
const [producer, follower] = (await Promise.all([
  startGatewayProcess(t, { store, routes: [route] }),
  startGatewayProcess(t, { store, routes: [route] }),
])) as [GatewayProcess, GatewayProcess]

const resume = (base: string, sessionId: string, lastEventId: string): Promise<Response> =>
  fetch(`${base}/live`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': lastEventId } })

t.test('a quiet producer that is alive answers the probes: the follower waits for its real answer', async (t) => {
  const sessionId = await rawSession(`${producer.url}/live`, { elicitation: {} })
  const cut = new AbortController()
  const response = await post(`${producer.url}/live`, sessionId, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ask' } }, cut.signal)
  const reader = new SseReader(response)
  await reader.next() // priming
  const question = (await reader.next())!
  t.equal(JSON.parse(question.data).method, 'elicitation/create', 'the tool asks the client, then waits (read_timeout 5 s)')
  cut.abort()

  const started = Date.now()
  const events = await new SseReader(await resume(follower.url, sessionId, question.id!)).rest()
  const waited = Date.now() - started
  const final = JSON.parse(events.at(-1)!.data)
  t.equal(final.id, 5, 'the stream ends with the answer to the request')
  t.notOk(final.error, 'the producer\'s own answer (its elicitation timed out), not the follower\'s')
  t.ok(waited > 3000, `quiet for ${waited} ms, more than three times producer_timeout, and still followed`)
})

t.test('a producer killed mid-stream: the follower answers the request with -32603 and ends, in the log too', async (t) => {
  const sessionId = await rawSession(`${producer.url}/live`)
  const response = await post(`${producer.url}/live`, sessionId, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow', arguments: { steps: 1000 }, _meta: { progressToken: 'p' } } })
  const reader = new SseReader(response)
  await reader.next() // priming
  const progress = (await reader.next())!
  t.equal(JSON.parse(progress.data).method, 'notifications/progress')
  await producer.stop('SIGKILL')

  const started = Date.now()
  const events = await new SseReader(await resume(follower.url, sessionId, progress.id!)).rest()
  const final = JSON.parse(events.at(-1)!.data)
  t.equal(final.id, 9, 'the request is answered')
  t.equal(final.error?.code, -32603)
  t.match(final.error?.message, /stopped before answering/)
  t.ok(Date.now() - started < 10_000, `within ${Date.now() - started} ms (producer_timeout 1 s), not never`)

  const again = await new SseReader(await resume(follower.url, sessionId, progress.id!)).rest()
  t.same(JSON.parse(again.at(-1)!.data), final, 'a later resume replays the same answer from the log and ends')
})
