// The protocol engine without sockets: the official-style linked in-memory pair (client Transport ⇄
// MessageSession) against a real endpoint, its registry filled by a real handler module.
import { pino } from 'pino'
import t from 'tap'
import { McpClient, RpcError } from '../../gateway/client/index.ts'
import { configFromObject } from '../../gateway/config/load.ts'
import { defineHandler } from '../../gateway/index.ts'
import { RequestStateCodec } from '../../gateway/protocol/stateless/request-state.ts'
import { buildEndpoint } from '../../gateway/server/route-endpoint.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import { connectInMemory } from '../../gateway/transport/in-memory.ts'
import { RpcCode } from '../../gateway/wire/errors.ts'

const handler = defineHandler((mcp, server) => {
  server.register(
    mcp.tool('echo', ({ message }) => `Tool echo: ${String(message)}`, {
      inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    }),
    mcp.tool('count', async ({ to }, ctx) => {
      for (let step = 1; step <= Number(to); step++) ctx.progress(step, Number(to))
      return `counted to ${String(to)}`
    }),
    mcp.tool('ask', async (_args, ctx) => {
      const answer = await ctx.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } })
      return `hello ${String(answer.content?.name)}`
    }),
  )
})

async function linked(t: { teardown(fn: () => unknown): void }) {
  const config = configFromObject({ routes: [{ location: '/mem', handler: 'unused.ts', server: { name: 'mem', version: '1' } }] }, '<test>')
  const store = new MemoryStore({ eventCapacity: 8, cacheTtl: 60 })
  const endpoint = await buildEndpoint(config.routes[0]!, handler, store, pino({ level: 'silent' }), new RequestStateCodec('a-key-of-sixteen-chars', 60))
  const client = new McpClient(connectInMemory(endpoint), { clientInfo: { name: 'in-memory', version: '1' } })
  t.teardown(async () => {
    await client.close()
    endpoint.close()
    await store.close()
  })
  return { client, endpoint, store }
}

t.test('a client and an endpoint linked in memory: initialize, list, call, progress, errors', async (t) => {
  const { client, store } = await linked(t)
  const init = await client.initialize({ elicitation: async () => ({ action: 'accept', content: { name: 'Ada' } }) })
  t.equal(init.serverInfo.name, 'mem')
  t.equal(await store.count('/mem'), 1, 'the session is in the store')

  const tools = await client.listTools()
  t.same(tools.map((tool) => tool.name), ['echo', 'count', 'ask'])
  t.same(await client.callTool('echo', { message: 'hi' }), { content: [{ type: 'text', text: 'Tool echo: hi' }] })

  const progress: number[] = []
  const counted = await client.callTool('count', { to: 3 }, { onProgress: (step) => void progress.push(step) })
  t.same(counted.content, [{ type: 'text', text: 'counted to 3' }])
  t.same(progress, [1, 2, 3], 'progress notifications arrive before the result, in order')

  t.same((await client.callTool('ask', {})).content, [{ type: 'text', text: 'hello Ada' }], 'a server→client request is answered')

  const invalid = await client.callTool('echo', {})
  t.equal(invalid.isError, true, 'bad arguments are an isError result')
  await t.rejects(client.request('nope/nothing', {}), new RpcError(RpcCode.MethodNotFound, 'Method not found: nope/nothing'), 'an unknown method is -32601')
})

t.test('closing the client ends its session', async (t) => {
  const { client, store } = await linked(t)
  await client.initialize()
  t.equal(await store.count('/mem'), 1)
  await client.close()
  t.equal(await store.count('/mem'), 0, 'the session is deleted with its channel')
})
