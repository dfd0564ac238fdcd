/**
 * The chaos load's own clients never wait without bound (chaos-load.ts): Node's cluster can lose a
 * connection handed to a worker in the instant it dies, and such a request is never answered nor
 * closed. A progress stream's first request that gets no answer is a hang, judged as a call's is; a
 * stream gone silent, or a resumption never answered, is resumed again. (Unbounded, one such request
 * kept chaos-workers waiting until tap's timeout, after the killed worker had been replaced.)
 */
import { createServer, type ServerResponse } from 'node:http'
import t from 'tap'
import { CALL_TIMEOUT_MS, progressStream } from './chaos-load.ts'

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
  const run = await progressStream(url, 'session', 's0', 3, performance.now() + 30_000)
  const took = performance.now() - sent
  t.ok(run.hungAt !== undefined && run.hungAt >= sent, 'a hang, with when it was sent')
  t.notOk(run.cut, 'not a cut')
  t.ok(took >= CALL_TIMEOUT_MS - 50 && took < CALL_TIMEOUT_MS + 5000, `given up after ${Math.round(took)} ms`)
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
  const run = await progressStream(url, 'session', 's1', 1, performance.now() + 60_000)
  t.same(run.progress, [1])
  t.same(run.ids, ['e1', 'e2'])
  t.equal(run.resumptions, 2, 'resumed after the silence, and again after the unanswered resumption')
  t.match(run.final, { id: 's1', result: {} }, 'then the answer')
  t.equal(run.failure, undefined)
})
