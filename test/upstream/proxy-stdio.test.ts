/**
 * A stdio upstream through a proxy route (the stdio pool underneath), beside an HTTP upstream:
 * server-everything as a child of the gateway, prefixed, called with progress and sampling relayed.
 */
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { McpClient, StreamableHttpTransport } from '../../gateway/client/index.ts'
import { gatewayWith } from '../client/harness.ts'
import { everythingServer as everything } from '../fixtures/everything-server.ts'

t.setTimeout(120_000)
const echo = fileURLToPath(new URL('../../handlers/echo.ts', import.meta.url))
const text = (result: { content?: unknown }): string => ((result.content as Array<{ text: string }>)[0]!.text)

t.test('a stdio upstream (shared child) and an HTTP upstream under one route', async (t) => {
  const docs = await gatewayWith(t, [{ location: '/docs', handler: echo, server: { name: 'docs', version: '1.0.0' } }])
  const proxy = await gatewayWith(t, [{
    location: '/mix',
    server: { name: 'mix', version: '1.0.0' },
    upstreams: [
      { name: 'docs', url: `${docs.url}/docs` },
      { name: 'everything', command: ['node', everything, 'stdio'], timeout: 20 },
    ],
  }])
  const client = new McpClient(new StreamableHttpTransport({ url: `${proxy.url}/mix` }))
  await client.initialize()
  t.teardown(() => client.close())
  const names = (await client.listTools()).map((tool) => tool.name)
  t.ok(names.includes('docs__echo') && names.includes('everything__echo'), 'both upstreams listed, prefixed')
  t.equal(text(await client.callTool('everything__echo', { message: 'over stdio' })), 'Echo: over stdio')
  t.equal(text(await client.callTool('docs__echo', { message: 'over http' })), 'Tool echo: over http')
  const progress: number[] = []
  await client.callTool('everything__trigger-long-running-operation', { duration: 0.3, steps: 3 }, { onProgress: (p) => void progress.push(p) })
  t.same(progress, [1, 2, 3], 'progress from the child, tokens mapped twice (pool, proxy)')
})
