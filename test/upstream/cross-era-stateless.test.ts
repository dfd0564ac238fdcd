/**
 * Across the eras, the other way: stateless (2026-07-28) clients through a proxy route to the SDK 1.x
 * reference server, which speaks 2025-11-25 only. Its elicitation and sampling requests reach the
 * client as input-required rounds, and the upstream call is parked between rounds, not run again:
 * the v2 client over stdio; then raw rounds over Streamable HTTP through a recorder, for what the
 * upstream sees (one call per round trip), a used requestState, max_parked, a client that retries
 * too late and a park whose worker is gone (both replay the call with the answers so far).
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { paramsDigest, RequestStateCodec } from '../../gateway/protocol/stateless/request-state.ts'
import { EdgeCode, RpcCode } from '../../gateway/wire/errors.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { gatewayWith } from '../e2e/harness.ts'
import { everythingOverHttp, everythingServer as everything } from '../fixtures/everything-server.ts'

t.setTimeout(90_000)
const texts = (result: { content?: unknown }): string => ((result.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n')
const KEY = 'cross-era-test-key-0123456789'

t.test('the v2 client → proxy → server-everything over stdio: an elicitation round and a sampling round', async (t) => {
  const proxy = await gatewayWith(t, [{
    location: '/everything',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'everything', command: ['node', everything, 'stdio'], timeout: 20 }],
    prefix: 'never',
  }])
  const asked: string[] = []
  const client = new ClientV2({ name: 'v2', version: '2.0.0' }, { capabilities: { elicitation: { form: {}, url: {} }, sampling: {} }, versionNegotiation: { mode: 'auto' } })
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as { message: string; mode?: string; url?: string }
    if (params.mode === 'url') {
      asked.push(`url ${params.url}`)
      return { action: 'accept' }
    }
    asked.push(`elicitation ${params.message}`)
    return { action: 'accept', content: { name: 'Ada Lovelace' } }
  })
  client.setRequestHandler('sampling/createMessage', async (request) => {
    const first = (request.params as { messages: Array<{ content: { text: string } }> }).messages[0]!
    asked.push('sampling')
    return { role: 'assistant', model: 'echo-model', content: { type: 'text', text: `you said: ${first.content.text}` } }
  })
  await client.connect(new TransportV2(new URL(`${proxy.url}/everything`)))
  t.teardown(() => client.close())
  t.equal(client.getProtocolEra(), 'modern', 'the client speaks 2026-07-28, stateless')

  const elicited = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })
  t.match(texts(elicited), /Ada Lovelace/, "the 2025 server got the stateless client's answer")
  const sampled = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ping?', maxTokens: 10 } })
  t.match(texts(sampled), /you said: .*ping\?/, 'and its model answer')
  t.same(asked.map((entry) => entry.split(' ')[0]), ['elicitation', 'sampling'], 'each question reached the client once, as an input request')

  // -32042 (URL elicitation required) does not exist in 2026-07-28: the client gets the URL as an
  // input request, and its retry calls again; the server then asks the same URL the ordinary way.
  asked.length = 0
  const consent = await client.callTool({ name: 'trigger-url-elicitation', arguments: { url: 'https://example.com/consent', errorPath: true, elicitationId: 'consent-1' } })
  t.notOk(consent.isError, 'the call completes')
  t.equal(asked.length, 2, 'two URL rounds')
  t.match(asked[0], /^url https:\/\//, "the -32042 error's URL (the server's prerequisite) as an input request")
  t.equal(asked[1], 'url https://example.com/consent', 'then the URL elicitation request of the retried call, parked like any other')
})

t.test('over Streamable HTTP: one upstream call per round trip; used, too late, gone and too many', async (t) => {
  const { port } = await everythingOverHttp(t, 20_000)
  const recorder = await roundRobin(t, [`http://127.0.0.1:${port}`])
  const proxy = await gatewayWith(t, [{
    location: '/everything',
    server: { name: 'proxy', version: '1.0.0' },
    read_timeout: 1,
    producer_timeout: 1,
    upstreams: [{ name: 'everything', url: `${recorder.url}/mcp`, timeout: 10, max_parked: 1 }],
    prefix: 'never',
  }], { request_state: { key: KEY } })

  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } }
  const call = { name: 'trigger-elicitation-request', arguments: {} }
  const post = async (id: number, extra: object = {}) => {
    const response = await fetch(`${proxy.url}/everything`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': call.name },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { _meta: meta, ...call, ...extra } }),
    })
    const text = await response.text()
    const body = JSON.parse(text.startsWith('{') ? text : text.split('\n').filter((line) => line.startsWith('data: {')).at(-1)!.slice(6))
    return body as { id: number; result?: Record<string, any>; error?: { code: number; message: string } }
  }
  const answer = (name: string) => ({ 'elicitation-0': { action: 'accept', content: { name } } })
  const upstreamCalls = () => recorder.log.filter((entry) => entry.body?.method === 'tools/call').length

  const first = (await post(1)).result!
  t.equal(first.resultType, 'input_required', "the upstream's elicitation is an input-required result")
  t.same(Object.keys(first.inputRequests), ['elicitation-0'])
  t.equal(first.inputRequests['elicitation-0'].method, 'elicitation/create')
  t.ok(first.inputRequests['elicitation-0'].params.requestedSchema !== undefined, "with the upstream's form")
  t.type(first.requestState, 'string', 'and a signed requestState')
  const done = await post(2, { inputResponses: answer('Grace'), requestState: first.requestState })
  t.equal(done.result!.resultType, 'complete')
  t.match(texts(done.result!), /Grace/, 'the retry resumed the parked call with the answer')
  t.equal(upstreamCalls(), 1, 'the upstream ran the call once for both rounds')

  const again = await post(3, { inputResponses: answer('Mallory'), requestState: first.requestState })
  t.equal(again.error?.code, RpcCode.InvalidParams, 'a requestState already answered is refused, not run again')
  t.match(again.error?.message, /used already/)

  const parked = (await post(4)).result!
  t.equal(parked.resultType, 'input_required', 'a call parks (max_parked: 1)')
  const refused = await post(5)
  t.equal(refused.error?.code, EdgeCode.MCP_EDGE_TOO_MANY_PARKED.rpc, 'the next one is refused while it waits')
  t.match(refused.error?.message, /max_parked/)

  await sleep(1300)
  const late = await post(6, { inputResponses: answer('Hopper'), requestState: parked.requestState })
  t.match(texts(late.result!), /Hopper/, 'a retry after read_timeout runs the call again, answered from the state')
  t.ok(recorder.log.some((entry) => entry.body?.method === 'notifications/cancelled'), 'the call given up was cancelled upstream')
  t.equal(upstreamCalls(), 3, 'the parked call, then its replay')

  // A park on a worker that no longer exists: only this gateway's key can sign that state.
  const codec = new RequestStateCodec(KEY, 60)
  const orphan = codec.sign('tools/call', paramsDigest(call), undefined, {
    answers: {},
    handlerState: { park: { w: 'a-worker-that-stopped', id: 'gone', r: 1 }, answers: answer('Lin') },
  })
  const started = Date.now()
  const replayed = await post(7, { requestState: orphan })
  t.match(texts(replayed.result!), /Lin/, 'no worker takes the park: the call runs again with the answers so far')
  t.ok(Date.now() - started >= 900, 'after producer_timeout without an answer from the owner')
})
