// The shipped config/gateway.yaml's /tools route, as `npm start` serves it: the example handler's
// tools beside @modelcontextprotocol/server-everything's, which runs over stdio from the project's
// own node_modules (no network), through the stdio pool; the official SDK client drives it.
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadConfig } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'

const shipped = fileURLToPath(new URL('../../config/gateway.yaml', import.meta.url))

t.test('/tools: the example handler and server-everything over stdio, one endpoint', async (t) => {
  const config = await loadConfig(shipped, { ...process.env, PORT: '0' })
  const gateway = await startGateway({ ...config, listen: { host: '127.0.0.1', port: 0 }, log: { ...config.log, level: 'silent' } })
  t.teardown(() => gateway.close())
  const client = new Client({ name: 'shipped-route-test', version: '1.0.0' })
  t.teardown(() => client.close())
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/tools`)))

  const names = (await client.listTools()).tools.map((tool) => tool.name)
  for (const name of ['deploy', 'rollback', 'echo', 'get-sum', 'trigger-long-running-operation']) t.ok(names.includes(name), `lists ${name}`)
  const echo = await client.callTool({ name: 'echo', arguments: { message: 'through the pool' } })
  t.same(echo.content, [{ type: 'text', text: 'Echo: through the pool' }], 'a call reaches the stdio child')
  const progress: number[] = []
  await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (p) => void progress.push(p.progress) })
  t.same(progress, [1, 2, 3], 'progress comes back through the gateway')
})
