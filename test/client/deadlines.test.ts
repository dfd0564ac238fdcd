// Request deadlines on one timer (gateway/client/deadline-timer.ts), against this project's gateway
// over Streamable HTTP: each request times out at its own deadline whatever the order they were
// sent in, answered requests are not touched, and the timer is set again for later requests.
import t from 'tap'
import { TimeoutError } from '../../gateway/client/index.ts'
import { gatewayWith, httpClient, liveRoute, text } from './harness.ts'

t.test('each request times out at its own deadline; the others are answered', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const client = await httpClient(t, `${gateway.url}/live`)
  const started = performance.now()
  const ended = (promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> =>
    promise.then(() => ({ error: undefined, ms: performance.now() - started }), (error: unknown) => ({ error, ms: performance.now() - started }))
  // The longer deadline first: the shorter one sent after it must move the timer earlier.
  const long = ended(client.callTool('slow', { steps: 50 }, { timeoutMs: 600 }))
  const short = ended(client.callTool('slow', { steps: 50 }, { timeoutMs: 100 }))
  const answered = client.callTool('slow', { steps: 1 }, { timeoutMs: 5000 })
  const [first, second] = [await short, await long]
  t.type(first.error, TimeoutError)
  t.match(first.error, { timeoutMs: 100 })
  t.ok(first.ms >= 95 && first.ms < 550, `the 100 ms request timed out at ${Math.round(first.ms)} ms, before the 600 ms one`)
  t.type(second.error, TimeoutError)
  t.match(second.error, { timeoutMs: 600 })
  t.ok(second.ms >= 595, `the 600 ms request timed out at ${Math.round(second.ms)} ms, not before`)
  t.equal(text(await answered), 'done after 1 steps', 'a request answered in time is not timed out')

  // Nothing pending now: a new request sets the timer again.
  const later = performance.now()
  const again = await client.callTool('slow', { steps: 50 }, { timeoutMs: 80 }).catch((error: unknown) => error)
  t.type(again, TimeoutError)
  t.ok(performance.now() - later >= 75, 'the later request had its whole time')
  t.equal(text(await client.callTool('slow', { steps: 1 })), 'done after 1 steps', 'the session goes on')
})
