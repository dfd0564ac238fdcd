/**
 * The client's lua-resty-mcp conveniences: sampling and elicitation callbacks that answer in short
 * (a string, the content alone, true/false/undefined), callbacks that report progress, a stdio
 * command given as one string, 0 meaning no timeout, waitBackgroundTasks, and a list cache cleared
 * by list_changed. A real gateway on loopback (its handlers check the answers), real child processes.
 */
import t from 'tap'
import { McpClient, StdioTransport, StreamableHttpTransport, TimeoutError, TransportError } from '../../gateway/client/index.ts'
import { splitCommand } from '../../gateway/client/stdio.ts'
import { seen } from '../protocol/fixtures/events.ts'
import { clientFixture, eventually, gatewayWith, httpClient, liveRoute, recordingFetch, text } from './harness.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const EVENTS = { location: '/events', handler: new URL('../protocol/fixtures/events.ts', import.meta.url).pathname, server: { name: 'events', version: '1' } }

t.test('sampling shortcuts: a string, or a result without role and model, becomes a full result', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const answers: unknown[] = ['four words, no more', { content: { type: 'text', text: 'no role, no model' } }]
  const named = await httpClient(t, `${gateway.url}/live`, { sampling: () => answers.shift() as never, samplingModel: 'test-model' })
  t.equal(text(await named.callTool('sample', { prompt: 'hi' })), 'model test-model said: four words, no more')
  t.equal(text(await named.callTool('sample', { prompt: 'hi' })), 'model test-model said: no role, no model')
  const plain = await httpClient(t, `${gateway.url}/live`, { sampling: () => 'hello' })
  t.equal(text(await plain.callTool('sample', { prompt: 'hi' })), 'model client-test said: hello', 'the model defaults to the clientInfo name')
})

t.test('elicitation shortcuts: the content alone accepts, false declines, undefined cancels', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const answers: unknown[] = [{ name: 'Ada' }, false, undefined, { action: 'accept', content: { name: 'Grace' } }]
  const client = await httpClient(t, `${gateway.url}/live`, { elicitation: () => answers.shift() as never })
  t.equal(text(await client.callTool('ask')), 'Hello, Ada')
  t.equal(text(await client.callTool('ask')), 'no answer (decline)')
  t.equal(text(await client.callTool('ask')), 'no answer (cancel)')
  t.equal(text(await client.callTool('ask')), 'Hello, Grace', 'a full result as it is')
})

t.test('a callback reports progress on the server request; the handler hears it', async (t) => {
  const gateway = await gatewayWith(t, [EVENTS, liveRoute])
  const reported: boolean[] = []
  const client = await httpClient(t, `${gateway.url}/events`, {
    sampling: async (_params, extra) => {
      reported.push(extra.progress(1, 2, 'half'))
      await sleep(30)
      reported.push(extra.progress(2, 2, 'done'))
      await sleep(30)
      return 'counted'
    },
  })
  t.equal(text(await client.callTool('sample_with_progress', {})), 'sampled: counted')
  t.same(seen.progress, [[1, 2, 'half'], [2, 2, 'done']])
  t.same(reported, [true, true])
  // The live route's sample asks for no progress: nothing to report to.
  const quiet = await httpClient(t, `${gateway.url}/live`, { sampling: (_params, extra) => (reported.push(extra.progress(1)), 'ok') })
  await quiet.callTool('sample', { prompt: 'x' })
  t.equal(reported.at(-1), false, 'no progressToken: false, nothing sent')
})

t.test('a stdio command as one string, with quotes', async (t) => {
  t.same(splitCommand(`node "a b.mjs" 'c d' e\\ f  --x=1`), ['node', 'a b.mjs', 'c d', 'e f', '--x=1'])
  t.same(splitCommand(`say "it's \\"quoted\\"" ''`), ['say', `it's "quoted"`, ''])
  t.throws(() => splitCommand('node "open'), { message: /unclosed " in the command/ })
  const client = new McpClient(new StdioTransport({ command: `'${process.execPath}' '${clientFixture('stdio-script.mjs')}' normal`, env: { SCRIPT_NAME: 'one string' }, stderr: 'ignore' }))
  t.teardown(() => client.close())
  t.equal((await client.initialize()).serverInfo.name, 'one string')
  await t.rejects(new McpClient(new StdioTransport({ command: '   ' })).initialize(), TransportError, 'an empty command is refused')
})

t.test('0 means no timeout, for the client default and for one request', async (t) => {
  const mute = new StdioTransport({ command: process.execPath, args: [clientFixture('stdio-script.mjs'), 'mute'], stderr: 'ignore', writeTimeoutMs: 0 })
  const client = new McpClient(mute, { timeoutMs: 0 })
  t.teardown(() => client.close())
  await client.initialize()
  await t.rejects(client.callTool('x', {}, { timeoutMs: 50 }), TimeoutError, 'a timeout still applies when given')
  const forever = client.callTool('x')
  const pending = await Promise.race([forever.then(() => 'answered', () => 'failed'), sleep(300).then(() => 'still waiting')])
  t.equal(pending, 'still waiting', 'timeoutMs 0 on the client: no timer')
  const alsoForever = client.callTool('x', {}, { timeoutMs: 0 })
  t.equal(await Promise.race([alsoForever.then(() => 'answered', () => 'failed'), sleep(100).then(() => 'still waiting')]), 'still waiting')
  forever.catch(() => undefined)
  alsoForever.catch(() => undefined)
})

t.test('waitBackgroundTasks waits for handlers the client runs, or says it timed out', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  let handled = 0
  const client = await httpClient(t, `${gateway.url}/live`, { on: { log: async () => { await sleep(150); handled++ } } })
  await client.callTool('levels')
  await sleep(20)
  t.equal(await client.waitBackgroundTasks(10), false, 'the log handlers are still running')
  t.equal(await client.waitBackgroundTasks(), true)
  t.equal(handled, 4, 'all four log handlers finished')
  t.equal(await client.waitBackgroundTasks(10), true, 'nothing left')
})

t.test('cacheLists: a list is fetched once until its list_changed', async (t) => {
  const gateway = await gatewayWith(t, [liveRoute])
  const recorded = recordingFetch()
  const client = new McpClient(new StreamableHttpTransport({ url: `${gateway.url}/live`, fetch: recorded.fetch }), { cacheLists: true })
  t.teardown(() => client.close())
  await client.initialize()
  const first = await client.listTools()
  const second = await client.listTools()
  t.same(second, first)
  t.equal(recorded.methods.filter((method) => method === 'tools/list').length, 1, 'one tools/list for two calls')
  await client.callTool('grow')
  await eventually(async () => (await client.listTools()).some((tool) => tool.name.startsWith('grown_')))
  t.equal(recorded.methods.filter((method) => method === 'tools/list').length, 2, 'fetched again after tools/list_changed')
  await client.listTools()
  t.equal(recorded.methods.filter((method) => method === 'tools/list').length, 2, 'and kept again')
  const uncached = await httpClient(t, `${gateway.url}/live`, {}, { fetch: recorded.fetch })
  const before = recorded.methods.length
  await uncached.listTools()
  await uncached.listTools()
  t.equal(recorded.methods.slice(before).filter((method) => method === 'tools/list').length, 2, 'by default every call asks')
})
