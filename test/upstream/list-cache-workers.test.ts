/**
 * The shared list cache over two workers of one host (the cluster store: the primary holds it), behind
 * a forwarder that opens a fresh connection per request so consecutive requests reach different
 * workers; SDK McpServer upstreams count every request they get.
 *
 * - The cold list asks each upstream once; warm lists on either worker ask none.
 * - An upstream's list_changed, heard by the worker holding the session's upstream link, drops the
 *   upstream's lists for the other worker too; the client hears list_changed.
 * - A reload (SIGHUP: each worker builds a new generation) drops the route's lists.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { startGatewayProcess } from '../cluster/gateway-process.ts'
import { roundRobin } from '../cluster/round-robin.ts'
import { startCountingUpstream, type CountingUpstream } from './fixtures/counting-upstream.ts'

t.setTimeout(120_000)

const upstreams: CountingUpstream[] = []
for (const name of ['w1', 'w2', 'w3']) upstreams.push(await startCountingUpstream(t, name))
const gateway = await startGatewayProcess(t, {
  workers: 2,
  drain_timeout: 1,
  routes: [{
    location: '/three',
    server: { name: 'three', version: '1.0.0' },
    capabilities: { tools: { list_changed: true } },
    upstreams: upstreams.map((upstream, index) => ({ name: `w${index + 1}`, url: upstream.url })),
  }],
  // A primary and two workers compile their TypeScript at start: slow on a busy 2-core machine.
}, 2, 60_000)
const balancer = await roundRobin(t, [gateway.url])
const counts = (): number[] => upstreams.map((upstream) => upstream.count('tools/list'))

const client = new Client({ name: 'list-cache-workers', version: '1.0.0' })
await client.connect(new StreamableHTTPClientTransport(new URL(`${balancer.url}/three`)))
t.teardown(() => client.close())
const names = async (): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name).sort()

t.test('warm lists on both workers ask no upstream', async (t) => {
  const first = await names()
  t.equal(first.length, 9)
  t.same(counts(), [1, 1, 1], 'the cold list asked each upstream once')
  for (let round = 0; round < 4; round++) t.same(await names(), first)
  t.same(counts(), [1, 1, 1], 'four more lists: 0 upstream calls')
  // Access lines are buffered (flushed each second): wait for both workers' lines.
  const served = (): Set<unknown> => new Set(gateway.logs.filter((line) => line.msg === 'mcp request' && line.method === 'tools/list').map((line) => line.pid))
  await gateway.logged(() => served().size >= 2, 10_000)
  t.equal(served().size, 2, 'the lists were served by both workers (access lines by pid)')
})

t.test('an upstream\'s list_changed drops its lists on both workers', async (t) => {
  const heard = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()))
  upstreams[1]!.addTool('fresh')
  await heard
  t.ok((await names()).includes('w2__fresh'))
  t.same(counts(), [1, 2, 1], 'only the upstream that changed was asked again')
  await names()
  await names()
  t.same(counts(), [1, 2, 1], 'and its new list is shared by both workers')
})

t.test('a reload drops the route\'s lists', async (t) => {
  const before = gateway.logs.filter((line) => line.msg === 'reloaded').length
  gateway.child.kill('SIGHUP')
  await gateway.logged((line) => line.msg === 'reloaded' && gateway.logs.filter((entry) => entry.msg === 'reloaded').length >= before + 2, 60_000)
  await names()
  t.same(counts(), [2, 3, 2], 'every upstream asked again after the reload')
})
