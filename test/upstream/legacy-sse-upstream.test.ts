/**
 * An upstream of the 2024-11-05 HTTP+SSE transport (`{name, sse: URL}`) in front of the official SDK
 * 1.x `SSEServerTransport` on a node:http server, reached by the official SDK client over Streamable
 * HTTP: tools listed and called, progress and logging forwarded, the upstream's sampling request
 * answered by the downstream client, a cancellation reaching the server's handler, a dropped stream replaced by a new upstream session. Then hostile
 * upstreams: an endpoint event naming another origin, an event over `max_message_size`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import t, { type Test } from 'tap'
import { e2eFixture, gatewayWith } from '../client/harness.ts'
import { eventually } from '../fixtures/waiting.ts'
import { legacySseServer, rawSseServer } from './fixtures/legacy-sse-server.ts'

t.setTimeout(60_000)
interface CallResult { isError?: boolean; content?: Array<{ text?: string }> }
const text = (result: unknown): string => (result as CallResult).content?.[0]?.text ?? ''

async function sdkClient(t: Test, url: string): Promise<{ client: Client; logs: string[] }> {
  const logs: string[] = []
  const client = new Client({ name: 'legacy-upstream-test', version: '1.0.0' }, { capabilities: { sampling: {} } })
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: 'assistant',
    model: 'test-model',
    content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` },
  }))
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)))
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  t.teardown(() => client.close())
  return { client, logs }
}

t.test('in front of the SDK SSEServerTransport: lists, calls, progress, logging, sampling, a new session after a drop', async (t) => {
  const upstream = await legacySseServer(t)
  const gateway = await gatewayWith(t, [{
    location: '/p',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'old', sse: upstream.url, timeout: 10 }],
  }])
  const { client, logs } = await sdkClient(t, `${gateway.url}/p`)

  const tools = (await client.listTools()).tools.map((tool) => tool.name).sort()
  t.same(tools, ['count', 'echo', 'sample', 'session', 'wait'], 'the upstream\'s tools (one upstream: no prefix)')
  t.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'hi' } })), 'Echo: hi', 'a call reaches the old server and its answer comes back')

  const progress: number[] = []
  const counted = await client.callTool({ name: 'count', arguments: { steps: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) })
  t.equal(text(counted), 'counted to 3')
  t.same(progress, [1, 2, 3], 'the upstream\'s progress reaches the client, in order, on the client\'s token')
  await eventually(() => logs.includes('counted to 3'))
  t.pass('the upstream\'s log message reaches the client')

  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'ping' } })), 'model test-model said: echo ping',
    'the upstream\'s sampling request went to the client over the gateway, and its answer back up')

  // The client gives up: notifications/cancelled goes up as a POST, and the server's handler sees its signal fire.
  const controller = new AbortController()
  const waiting = client.callTool({ name: 'wait' }, undefined, { signal: controller.signal })
  await eventually(() => upstream.observed.started === 1)
  controller.abort('enough')
  await t.rejects(waiting, 'the client gave up')
  await eventually(() => upstream.observed.aborted === 1)
  t.pass('the upstream saw the cancellation')

  // The client's session maps to one upstream session (the probe holds another of its own).
  const first = text(await client.callTool({ name: 'session' }))
  t.ok(upstream.sessions.has(first), 'the call was served on an open SDK session')
  t.equal(text(await client.callTool({ name: 'session' })), first, 'the next call on the same upstream session')

  upstream.dropStreams()
  await eventually(() => upstream.sessions.size === 0)
  let after = ''
  await eventually(async () => {
    const result = await client.callTool({ name: 'session' }) as CallResult
    if (result.isError === true) return false
    after = text(result)
    return true
  }, 10_000)
  t.not(after, first, 'after the stream dropped, a new upstream session (a new stream and initialize) serves the client')
  t.ok(upstream.sessions.has(after), 'and it is open')
  t.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'again' } })), 'Echo: again', 'calls go on')
})

t.test('hostile upstreams: a cross-origin endpoint gets no POST, an oversize event ends the session', async (t) => {
  const elsewhere = await rawSseServer(t, () => ': nothing here\n\n')
  const crossOrigin = await rawSseServer(t, () => `event: endpoint\ndata: ${new URL(elsewhere.url).origin}/messages?sessionId=x\n\n`)
  const oversize = await rawSseServer(t, (origin) => `event: endpoint\ndata: ${origin}/messages?sessionId=y\n\n`, `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(4096) } })}\n\n`)
  const gateway = await gatewayWith(t, [{
    location: '/h',
    server: { name: 'hostile', version: '1.0.0' },
    upstreams: [
      { name: 'cross', sse: crossOrigin.url, timeout: 2, start_wait: 0 },
      { name: 'big', sse: oversize.url, timeout: 2, start_wait: 0, max_message_size: 1024 },
    ],
  }])
  const { client } = await sdkClient(t, `${gateway.url}/h`)
  const result = await client.callTool({ name: 'cross__anything' }).catch((error: Error) => ({ isError: true, content: [{ text: error.message }] }))
  t.equal((result as CallResult).isError, true, 'a call to the cross-origin upstream fails')
  t.same(elsewhere.posts, [], 'the other origin never got a POST')
  t.same(crossOrigin.posts, [], 'nor did the upstream itself (its endpoint was refused)')
  await eventually(async () => {
    const ready = await (await fetch(`${gateway.url}/readyz`)).json() as { upstreams: Record<string, Record<string, { state: string; reason?: string }>> }
    const seen = ready.upstreams['/h']!
    return seen.cross?.state === 'down' && seen.big?.state === 'down'
  }, 10_000)
  t.pass('both upstreams are down on /readyz')
  t.ok(oversize.posts.length >= 1, 'the oversize upstream got the initialize (its stream broke after)')
})

t.test('mcp-edge on both sides: a proxy route whose sse upstream is another route served over HTTP+SSE', async (t) => {
  const old = await gatewayWith(t, [{ location: '/old', handler: e2eFixture('live'), server: { name: 'old', version: '1.0.0' }, transports: ['sse'] }])
  const gateway = await gatewayWith(t, [{ location: '/p', server: { name: 'proxy', version: '1.0.0' }, upstreams: [{ name: 'old', sse: `${old.url}/old/sse` }] }])
  const { client } = await sdkClient(t, `${gateway.url}/p`)
  const progress: number[] = []
  t.equal(text(await client.callTool({ name: 'slow', arguments: { steps: 2 } }, undefined, { onprogress: (p) => void progress.push(p.progress) })), 'done after 2 steps')
  t.ok(progress.includes(1), 'progress crossed both hops')
  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'both' } })), 'model test-model said: echo both', 'sampling asked over both hops and answered back')
})
