/**
 * Tool search across hosts on Redis: what a session loaded with load_tools on one gateway is in its
 * tools/list on another (the session's catalogue document is in the store), and only in that
 * session's.
 */
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { startRedis } from '../store/redis-server.ts'

t.setTimeout(60_000)
const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url))

t.test('loaded tools follow the session to another host', async (t) => {
  const redis = await startRedis(t)
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    store: { type: 'redis', url: redis.url, key_prefix: 'search:' },
    routes: [{ location: '/tools', handler: here('./fixtures/generated-tools.ts'), server: { name: 'big', version: '1.0.0' }, options: { count: 120 }, catalogue: 'search' }],
  }, '<test>')
  const [hostA, hostB] = await Promise.all([startGateway(config), startGateway(config)])
  t.teardown(() => Promise.all([hostA.close(), hostB.close()]))

  const connect = async (url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
    const client = new Client({ name: 'two-hosts', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/tools`))
    await client.connect(transport)
    t.teardown(async () => {
      await transport.terminateSession().catch(() => undefined)
      await client.close()
    })
    return { client, transport }
  }
  const { client: onA, transport } = await connect(hostA.url)
  const { client: other } = await connect(hostB.url)
  const loaded = await onA.callTool({ name: 'load_tools', arguments: { names: ['hr_get_employee', 'dns_update_record'] } })
  t.notOk(loaded.isError)

  // The same session, its next requests on host B.
  const onB = async (id: number, method: string, params: object = {}): Promise<{ result: { tools?: Array<{ name: string }>; structuredContent?: unknown } }> => {
    const response = await fetch(`${hostB.url}/tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': transport.sessionId! },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    })
    t.equal(response.status, 200)
    return await response.json() as { result: { tools?: Array<{ name: string }>; structuredContent?: unknown } }
  }
  const names = (await onB(1, 'tools/list')).result.tools!.map((tool) => tool.name)
  t.same(names, ['search_tools', 'describe_tool', 'call_tool', 'load_tools', 'hr_get_employee', 'dns_update_record'], 'host B lists what the session loaded on host A')
  t.same((await onB(2, 'tools/call', { name: 'dns_update_record', arguments: { id: 'www' } })).result.structuredContent, { tool: 'dns_update_record', args: { id: 'www' } })
  t.same((await other.listTools()).tools.map((tool) => tool.name), ['search_tools', 'describe_tool', 'call_tool', 'load_tools'], "another session's list on host B is its own")
})
