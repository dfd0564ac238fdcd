/**
 * Across the eras, one way: the official SDK 1.x client (a 2025-11-25 session) through a proxy route
 * to an upstream of 2026-07-28 only (an mcp-edge route behind a front that refuses the 2025 era).
 * The upstream's input-required results reach the client as server→client requests on its stream
 * (elicitation, sampling, roots), the gateway retries with the answers and the upstream's
 * requestState, progress flows, and 2026 error codes arrive as a 2025 client knows them. (The
 * gateway tries one 2025 initialize first, which the front refuses: see proxy-discover-2026-only.)
 */
import { McpError as SdkError } from '@modelcontextprotocol/sdk/types.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { EdgeCode, RpcCode } from '../../gateway/wire/errors.ts'
import { connect, fixture, gatewayWith } from '../e2e/harness.ts'
import { statelessOnly } from './fixtures/stateless-only.ts'

t.setTimeout(60_000)
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

t.test('a 2025 session client on a 2026-only upstream: input-required rounds become requests on its stream', async (t) => {
  const upstream = await gatewayWith(t, [{ location: '/live', handler: fixture('live'), server: { name: 'live', version: '1.0.0' } }])
  const front = await statelessOnly(t, `${upstream.url}/live`)
  const proxy = await gatewayWith(t, [{
    location: '/live',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'modern', url: `${front.url}/live`, timeout: 10 }],
    prefix: 'never',
  }])
  const asked: string[] = []
  const client = await connect(t, `${proxy.url}/live`, { sampling: {}, elicitation: { form: {} }, roots: {} }, (c) => {
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(`elicitation: ${request.params.message}`)
      return { action: 'accept', content: { name: 'Grace' } }
    })
    c.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push('sampling')
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` } }
    })
    c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///srv' }] }))
  })

  t.ok((await client.listTools()).tools.some((tool) => tool.name === 'ask'), 'lists go up stateless')
  const ask = await client.callTool({ name: 'ask' })
  t.equal(text(ask), 'Hello, Grace', 'the elicitation round was asked of the session client and answered')
  t.notOk('resultType' in ask, 'no 2026 keys reach the 2025 client')
  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })), 'model test-model said: echo hi', 'a sampling round')
  t.equal(text(await client.callTool({ name: 'roots' })), 'file:///srv', 'a roots round')
  t.same(asked, ['elicitation: What is your name?', 'sampling'], 'each question reached the client once')

  const calls = front.log.filter((body) => body.method === 'tools/call' && (body.params as { name: string }).name === 'ask')
  t.equal(calls.length, 2, 'the call, then its retry')
  const retry = calls[1]!.params as Record<string, unknown>
  t.match(retry.inputResponses, { 'elicitation-0': { action: 'accept', content: { name: 'Grace' } } }, 'the retry carries the answer under the upstream’s key')
  t.type(retry.requestState, 'string', "and the upstream's own requestState")
  t.match((retry._meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'], { sampling: {}, elicitation: { form: {} } }, "the envelope declares the session client's capabilities")
  // Its discover lists 2026-07-28 alone, but such a server may still accept a 2025 initialize (the
  // Python SDK's v2 servers do: proxy-discover-2026-only.test.ts): one is tried, refused, remembered.
  t.equal(front.refused, 1, 'one 2025-era initialize was tried and refused; nothing of that era after it')

  const progress: number[] = []
  t.equal(text(await client.callTool({ name: 'slow', arguments: { steps: 2 } }, undefined, { onprogress: (p) => void progress.push(p.progress) })), 'done after 2 steps')
  t.same(progress, [1, 2], 'progress of the stateless upstream reaches the session client')

  const bare = await connect(t, `${proxy.url}/live`)
  const missing = await bare.callTool({ name: 'sample', arguments: { prompt: 'p' } }).then(() => undefined, (error: unknown) => error)
  t.ok(missing instanceof SdkError, 'a capability the client lacks is a JSON-RPC error')
  t.equal((missing as SdkError).code, EdgeCode.MCP_EDGE_CLIENT_CAPABILITY_MISSING.rpc, '-32021 arrives as the code a 2025 route answers with')
  t.match((missing as SdkError).data, { requiredCapabilities: { sampling: {} } }, 'with what is missing')

  const unknown = await client.readResource({ uri: 'live://nothing' }).then(() => undefined, (error: unknown) => error)
  t.equal((unknown as SdkError).code, RpcCode.ResourceNotFound, "a 2026 upstream's -32602 for an unknown resource is -32002 for a 2025 client")
})

t.test('a 2026 upstream that keeps asking: the call fails after max_input_rounds rounds, and the session goes on', async (t) => {
  const upstream = await gatewayWith(t, [{ location: '/ask', handler: fileURLToPath(new URL('./fixtures/interrogator.ts', import.meta.url)), server: { name: 'asker', version: '1.0.0' } }])
  const front = await statelessOnly(t, `${upstream.url}/ask`)
  const proxy = await gatewayWith(t, [{
    location: '/ask',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'asker', url: `${front.url}/ask`, timeout: 10, max_input_rounds: 2 }],
    prefix: 'never',
  }])
  let questions = 0
  const client = await connect(t, `${proxy.url}/ask`, { elicitation: { form: {} } }, (c) => {
    c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer: `a${++questions}` } }))
  })

  t.equal(text(await client.callTool({ name: 'interrogate', arguments: { questions: 2 } })), 'a1, a2', 'two rounds are within the bound')
  questions = 0
  const over = await client.callTool({ name: 'interrogate', arguments: { questions: 3 } }).then(() => undefined, (error: unknown) => error)
  t.ok(over instanceof SdkError, 'a third round fails the call with a JSON-RPC error (the upstream is not called unavailable)')
  t.equal((over as SdkError).code, RpcCode.InternalError, '-32603')
  t.match((over as SdkError).message, /asked for input more than 2 times in one call \(upstreams\[\]\.max_input_rounds\)/, 'naming the bound and its key')
  t.equal(questions, 2, 'the client was asked twice, not a third time')
  const tries = front.log.filter((body) => body.method === 'tools/call' && (body.params as { arguments?: { questions?: number } }).arguments?.questions === 3)
  t.equal(tries.length, 3, 'the call and its two retries went up; no fourth')
  t.equal(text(await client.callTool({ name: 'interrogate', arguments: { questions: 1 } })), 'a3', 'the session keeps working')
})
