// GET resumptions a client can make the gateway hold: an event id naming a stream the log never held
// is refused at once (404), and the resumed streams one session may hold are capped (429).
import t from 'tap'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { post, rawSession, SseReader } from '../e2e/sse-reader.ts'

const route = { location: '/live', handler: fixture('live'), server: { name: 'live', version: '1.0.0' } }

function resume(url: string, sessionId: string, lastEventId: string, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'last-event-id': lastEventId }, signal })
}

t.test('300 resumptions with invented event ids: each refused at once', async (t) => {
  const gateway = await gatewayWith(t, [route])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  const started = performance.now()
  const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => resume(url, sessionId, `pinvented${i}.n${i}/0`)))
  const elapsed = performance.now() - started
  const statuses = new Set(answers.map((answer) => answer.status))
  const bodies = await Promise.all(answers.map((answer) => answer.text()))
  t.same([...statuses], [404], 'every one 404')
  t.match(JSON.parse(bodies[0]!), { jsonrpc: '2.0', error: { code: -32602 } }, 'with a JSON-RPC error')
  t.ok(elapsed < 15_000, `all answered, none held (${Math.round(elapsed)} ms on a loaded machine)`)
})

t.test('followers per session are capped: over max_followers, 429 with -32000; a closed one frees its place', async (t) => {
  const gateway = await gatewayWith(t, [{ ...route, max_followers: 4 }])
  const url = `${gateway.url}/live`
  const sessionId = await rawSession(url)
  // A streamed call that has ended: resuming after its last event follows a stream nobody produces.
  const streamed = new SseReader(await post(url, sessionId, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { steps: 2 }, _meta: { progressToken: 'p' } } }))
  const events = await streamed.rest()
  const lastId = events.at(-1)!.id!
  t.ok(lastId, `the stream's last event id (${lastId})`)

  const held = new AbortController()
  t.teardown(() => held.abort())
  const answers = []
  for (let i = 0; i < 6; i++) answers.push(await resume(url, sessionId, lastId, held.signal))
  t.same(answers.map((answer) => answer.status), [200, 200, 200, 200, 429, 429], 'four held, the rest refused')
  const refusal = JSON.parse(await answers[4]!.text()) as { error: { code: number; message: string } }
  t.equal(refusal.error.code, -32000)
  t.match(refusal.error.message, /max_followers 4/, `the message names the limit (${refusal.error.message})`)
  await answers[0]!.body!.cancel()
  let again = 429
  for (let attempt = 0; attempt < 50 && again === 429; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    const answer = await resume(url, sessionId, lastId, held.signal)
    again = answer.status
    if (again !== 200) await answer.text()
  }
  t.equal(again, 200, 'a place freed by a closed follower is taken again')
})
