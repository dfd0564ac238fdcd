/**
 * The chaos load's own clients never wait without bound (chaos-load.ts): Node's cluster can lose a
 * connection handed to a worker in the instant it dies, and such a request is never answered nor
 * closed. A progress stream's first request that gets no answer is a hang, judged as a call's is; a
 * stream gone silent, or a resumption never answered, is resumed again. (Unbounded, one such request
 * kept chaos-workers waiting until tap's timeout, after the killed worker had been replaced.) A stream
 * never waits past its deadline, and a fault that fails stops the load (a call timer left running
 * kept the file's process alive after its test had failed). The read timeout is shortened here: its
 * length is not what is tested, and each case would otherwise wait out CALL_TIMEOUT_MS once or twice.
 */
import { createServer, type ServerResponse } from 'node:http'
import t from 'tap'
import { progressStream, underLoad } from './chaos-load.ts'

/** The read timeout these cases wait out. */
const TIMEOUT_MS = 1000

/** A server on a free port: `answer` gets each request, in order; one it leaves alone is never answered. */
async function server(t: { teardown(fn: () => unknown): void }, answer: (n: number, response: ServerResponse) => void): Promise<string> {
  let n = 0
  const http = createServer((request, response) => {
    request.resume()
    answer(n++, response)
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    http.closeAllConnections()
    return new Promise((resolve) => http.close(resolve))
  })
  const address = http.address()
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/live`
}

t.test('a first request never answered ends as a hang, after the call timeout', async (t) => {
  const url = await server(t, () => undefined)
  const sent = performance.now()
  const run = await progressStream(url, 'session', 's0', 3, performance.now() + 30_000, { timeoutMs: TIMEOUT_MS })
  const took = performance.now() - sent
  t.ok(run.hungAt !== undefined && run.hungAt >= sent, 'a hang, with when it was sent')
  t.notOk(run.cut, 'not a cut')
  t.ok(took >= TIMEOUT_MS - 50 && took < TIMEOUT_MS + 5000, `given up after ${Math.round(took)} ms`)
})

t.test('a stream gone silent, then a resumption never answered: resumed again until the answer', async (t) => {
  const url = await server(t, (n, response) => {
    if (n === 0) {
      // The call's stream: one event, then nothing (its worker is gone, its connection not closed).
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write(`id: e1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 's1', progress: 1 } })}\n\n`)
    } else if (n === 2) {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.end(`id: e2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 's1', result: { content: [] } })}\n\n`)
    }
    // n === 1: the first resumption is never answered.
  })
  const run = await progressStream(url, 'session', 's1', 1, performance.now() + 60_000, { timeoutMs: TIMEOUT_MS })
  t.same(run.progress, [1])
  t.same(run.ids, ['e1', 'e2'])
  t.equal(run.resumptions, 2, 'resumed after the silence, and again after the unanswered resumption')
  t.match(run.final, { id: 's1', result: {} }, 'then the answer')
  t.equal(run.failure, undefined)
})

t.test('a stream that never ends is given up at its deadline', async (t) => {
  const timers: NodeJS.Timeout[] = []
  t.teardown(() => timers.forEach(clearInterval))
  // Progress every 50 ms and never a final answer: the read timeout alone would wait forever.
  const url = await server(t, (_n, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    let progress = 0
    timers.push(setInterval(() => response.write(`id: e${++progress}\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 's2', progress } })}\n\n`), 50))
  })
  const sent = performance.now()
  const run = await progressStream(url, 'session', 's2', 1, sent + 1500, { timeoutMs: TIMEOUT_MS })
  const took = performance.now() - sent
  t.match(run.failure, /^no final answer by the deadline/, 'a failure that says why')
  t.ok(run.progress.length > 0, `progress came meanwhile (${run.progress.length})`)
  t.ok(took < 1500 + 3000, `given up ${Math.round(took)} ms after it began`)
})

t.test('a fault that fails stops the load: the test fails instead of hanging', async (t) => {
  let requests = 0
  const url = await server(t, (_n, response) => {
    requests++
    response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session' })
    response.end(JSON.stringify({ jsonrpc: '2.0', id: 'c0', result: {} }))
  })
  const failing = underLoad({
    url, sessions: 2, callsPerSecond: 100, streams: 0, steps: 1,
    faults: async () => {
      await new Promise((resolve) => setTimeout(resolve, 200))
      throw new Error('no matching log line')
    },
  })
  await t.rejects(failing, /no matching log line/, "the fault's error, not a hang")
  const after = requests
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(requests, after, 'no call sent once the load was stopped')
  t.ok(after > 4, `calls ran while the fault was injected (${after} requests)`)
})
