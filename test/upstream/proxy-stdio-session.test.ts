/**
 * A session-isolated stdio upstream through a proxy route: the child is initialized with the real
 * downstream client's capabilities and clientInfo, and what it sends during a call (a sampling
 * request, a log line, progress) belongs to that call, so it travels on the call's own stream. The
 * downstream client opens no standalone stream: anything not related to the call would be lost.
 */
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { McpClient, StreamableHttpTransport } from '../../gateway/client/index.ts'
import { gatewayWith, text } from '../client/harness.ts'

t.setTimeout(60_000)
const fixture = fileURLToPath(new URL('./fixtures/echo-server.mjs', import.meta.url))

t.test('isolation: session sees the client, and the child\'s messages follow the call', async (t) => {
  const proxy = await gatewayWith(t, [{
    location: '/solo',
    server: { name: 'solo', version: '1.0.0' },
    upstreams: [{ name: 'echo', command: ['node', fixture], isolation: 'session', timeout: 10 }],
    prefix: 'never',
  }])
  const logs: unknown[] = []
  const sampled: string[] = []
  const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/solo`, standaloneStream: false }), { clientInfo: { name: 'real-client', version: '7.1.0' } })
  await client.initialize({
    sampling: (params) => {
      sampled.push((params.messages[0]!.content as { text: string }).text)
      return { role: 'assistant', model: 'test', content: { type: 'text', text: 'sampled' } }
    },
    on: { log: (message) => void logs.push(message.data) },
  })
  t.teardown(() => client.close())

  const stats = JSON.parse(text(await client.callTool('stats', {}))) as { clientInfo: { name: string; version: string }; capabilities: Record<string, unknown> }
  t.same(stats.clientInfo, { name: 'real-client', version: '7.1.0' }, 'the child saw the real clientInfo')
  t.ok(stats.capabilities.sampling !== undefined, 'and the real capabilities (sampling)')

  const sample = JSON.parse(text(await client.callTool('sample', { marker: 'm1' }))) as { answer: { result: { content: { text: string } } } }
  t.same(sampled, ['m1'], 'the child\'s sampling request reached the client on the call\'s stream')
  t.equal(sample.answer.result.content.text, 'sampled', 'and its answer reached the child')

  await client.callTool('notify', { marker: 'logged' })
  t.same(logs, ['logged'], 'the log line of the call arrived on the call\'s stream')

  const progress: number[] = []
  await client.callTool('progress', { marker: 'p', steps: 3 }, { onProgress: (p) => void progress.push(p) })
  t.same(progress, [1, 2, 3], 'progress on the call\'s stream')
})
