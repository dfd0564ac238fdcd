/**
 * mcp-edge/client checks what a server asks of it, as lua-resty-mcp's client does: a malformed
 * sampling or elicitation request is answered -32602 without calling the callback; an elicitation
 * callback's content that does not match the requested schema is not sent (-32603). And cancellation
 * seen from both ends: a client callback's `signal` fires when the server gives up on its request,
 * and `ctx.progress()` answers false once the client cancelled the call. One gateway on loopback
 * (whose handlers send the requests as they are), the project's client over real HTTP.
 */
import t from 'tap'
import { CancelledError } from '../../gateway/client/index.ts'
import { progressSeen } from './fixtures/server-asks.ts'
import { clientFixture, eventually, gatewayWith, httpClient, text } from './harness.ts'

const route = { location: '/asks', handler: clientFixture('server-asks.ts'), server: { name: 'asks', version: '1' } }
const gateway = await gatewayWith(t, [route])
const url = `${gateway.url}/asks`

t.test('a malformed sampling request gets -32602 naming the problem; the callback is not called', async (t) => {
  let calls = 0
  const client = await httpClient(t, url, { sampling: () => (calls++, 'fine') })
  const cases: Array<[string, RegExp]> = [
    ['no messages', /messages must be a non-empty list$/],
    ['zero tokens', /maxTokens must be a positive integer$/],
    ['a robot role', /messages\[0\]\.role must be "user" or "assistant"$/],
    ['text without text', /messages\[0\]\.content of type text needs a string "text"$/],
    ['a bad includeContext', /includeContext must be "none", "thisServer" or "allServers"$/],
  ]
  for (const [kind, problem] of cases) {
    const said = text(await client.callTool('sample_bad', { kind }))
    t.match(said, /^client error -32602: Invalid sampling\/createMessage request: /, kind)
    t.match(said, problem)
  }
  t.equal(calls, 0, 'the sampling callback never saw a malformed request')
  t.equal(text(await client.callTool('sample_good')), 'model client-test', 'a well-formed one (with every option) reaches it')
  t.equal(calls, 1)
})

t.test('a malformed elicitation request gets -32602; the callback is not called', async (t) => {
  let calls = 0
  const client = await httpClient(t, url, { elicitation: () => (calls++, { name: 'Ada' }) })
  const cases: Array<[string, RegExp]> = [
    ['a nested object', /requestedSchema property "address" must be a string, number, integer, boolean or enum list field$/],
    ['an unknown required field', /requestedSchema "required" must list some of its properties$/],
    ['no properties', /requestedSchema must have "properties"$/],
  ]
  for (const [kind, problem] of cases) {
    const said = text(await client.callTool('elicit_bad', { kind }))
    t.match(said, /^client error -32602: Invalid elicitation\/create request: /, kind)
    t.match(said, problem)
  }
  t.equal(calls, 0, 'the elicitation callback never saw a malformed request')
})

t.test('elicitation content is checked against the requested schema before it is sent', async (t) => {
  const answers: unknown[] = [{ name: 'Ada', age: 36 }, { name: 'Ada', age: 'thirty-six' }, { age: 3 }, false, { action: 'accept', content: { name: '' } }]
  const client = await httpClient(t, url, { elicitation: () => answers.shift() as never })
  t.equal(text(await client.callTool('elicit_form')), 'answered: {"action":"accept","content":{"name":"Ada","age":36}}', 'matching content is sent')
  t.match(text(await client.callTool('elicit_form')), /^client error -32603: The elicitation callback's content does not match the requested schema: \/age must be integer/)
  t.match(text(await client.callTool('elicit_form')), /^client error -32603: .*must have required property 'name'/)
  t.equal(text(await client.callTool('elicit_form')), 'answered: {"action":"decline"}', 'a decline carries no content to check')
  t.match(text(await client.callTool('elicit_form')), /^client error -32603: .*\/name must NOT have fewer than 1 characters/, 'a full result is checked too')
})

t.test('a client callback\'s signal fires when the server gives up on its request', async (t) => {
  const aborted: string[] = []
  let asked = 0
  const client = await httpClient(t, url, {
    sampling: (_params, extra) =>
      new Promise((resolve) => {
        asked++
        extra.signal.addEventListener('abort', () => {
          aborted.push(String(extra.signal.reason))
          resolve('too late')
        }, { once: true })
      }),
  })
  // The server's own timeout: it sends notifications/cancelled for its sampling request.
  t.match(text(await client.callTool('sample_wait', { timeoutMs: 150 })), /^other: The client did not answer sampling\/createMessage within 150 ms/)
  await eventually(() => aborted.length === 1)
  t.match(aborted[0], /timed out/, 'the callback heard the server cancel, with its reason')

  // The tool call cancelled by the client: the handler's request ends, and with it the sampling request.
  const cut = new AbortController()
  const call = client.callTool('sample_wait', { timeoutMs: 60_000 }, { signal: cut.signal })
  await eventually(() => asked === 2)
  cut.abort('changed my mind')
  await t.rejects(call, CancelledError)
  await eventually(() => aborted.length === 2)
  t.match(aborted[1], /the request that asked was cancelled/)
})

t.test('ctx.progress() answers true while the call runs and false once the client cancelled it', async (t) => {
  const client = await httpClient(t, url)
  const cut = new AbortController()
  const heard: number[] = []
  const call = client.callTool('progress_then_wait', {}, {
    signal: cut.signal,
    onProgress: (progress) => {
      heard.push(progress)
      cut.abort('enough')
    },
  })
  await t.rejects(call, CancelledError)
  await eventually(() => progressSeen.after !== undefined)
  t.same(progressSeen, { before: true, aborted: true, after: false })
  t.same(heard, [1], 'nothing reached the client after the cancel')
})
