/**
 * A slow call on an HTTP upstream is that call's own: the real server-everything over Streamable
 * HTTP, its `trigger-long-running-operation` (10 s with its default arguments, as long as the
 * default upstream timeout). Before, one call past its timeout marked the upstream down, and
 * another user's next call was refused "unavailable" until the probe said otherwise; and a call
 * that kept reporting progress was cut at its first timeout all the same.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t, { type Test } from 'tap'
import { restartableEverything } from '../fixtures/everything-server.ts'
import { gatewayWith } from '../client/harness.ts'

t.setTimeout(120_000)

interface CallResult { isError?: boolean; content?: Array<{ text?: string }> }
const text = (result: unknown): string => (result as CallResult).content?.[0]?.text ?? ''

async function clients(t: Test, count: number): Promise<Client[]> {
  const everything = await restartableEverything(t)
  const gateway = await gatewayWith(t, [{
    location: '/p',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'everything', url: `${everything.origin}/mcp`, timeout: 1 }],
    prefix: 'never',
  }])
  return Promise.all(Array.from({ length: count }, async () => {
    const client = new Client({ name: 'slow-calls', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/p`)))
    t.teardown(() => client.close())
    return client
  }))
}

t.test('a call past its timeout is that call\'s error; another user\'s call right after is served', async (t) => {
  const [slow, other] = await clients(t, 2) as [Client, Client]
  const result = await slow.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 1 } }, undefined, { timeout: 30_000 }) as CallResult
  t.equal(result.isError, true)
  t.match(text(result), /did not answer this call within 1 s/, `its own timeout, in words: ${text(result)}`)
  t.notMatch(text(result), /unavailable/, 'not "unavailable": the upstream is there')
  for (let n = 0; n < 3; n++) t.equal(text(await other.callTool({ name: 'echo', arguments: { message: `now ${n}` } })), `Echo: now ${n}`, `the other session's call ${n} is served at once`)
})

t.test('a call that reports progress is not cut at its timeout, up to ten times it', async (t) => {
  const [client] = await clients(t, 1) as [Client]
  let reports = 0
  const started = Date.now()
  const done = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 6 } }, undefined, { timeout: 30_000, onprogress: () => reports++ }) as CallResult
  t.not(done.isError, true, `answered after ${Date.now() - started} ms with a 1 s timeout: ${text(done)}`)
  t.match(text(done), /completed/i)
  t.ok(reports >= 5, `its progress reached the client (${reports} reports)`)
  const capped = Date.now()
  const endless = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 40, steps: 80 } }, undefined, { timeout: 60_000, onprogress: () => undefined }) as CallResult
  const took = Date.now() - capped
  t.equal(endless.isError, true, 'a call that never ends is still ended')
  t.match(text(endless), /within 10 s/, `at ten times its timeout: ${text(endless)}`)
  t.ok(took >= 9_500 && took < 20_000, `after ${took} ms`)
})
