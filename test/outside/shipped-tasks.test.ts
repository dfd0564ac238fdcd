// The shipped config's /tools route serves the example handler, whose `audit` says taskSupport
// "optional" in tools/list. Without `tasks: {enabled: true}` on the route, the official 1.x client's
// callToolStream asked for a task and got a plain result back, which it refused ("expected object"
// at `task`): the tool listed as taskable was not. Both routes of that handler now take tasks.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { DEFAULT_CONFIG_FILE, loadConfig } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'

t.setTimeout(90_000)

const config = await loadConfig(DEFAULT_CONFIG_FILE)
config.listen.port = 0
config.log.level = 'silent'
for (const route of config.routes) route.options = { ...route.options, step_ms: 5 }
const gateway = await startGateway(config)
t.teardown(() => gateway.close())

for (const location of ['/example', '/tools']) {
  t.test(`${location}: the audit tool the list calls taskable runs as a task for the 1.x client`, async (t) => {
    const client = new Client({ name: 'tasks', version: '1.0.0' }, { capabilities: { tasks: {} } })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${location}`)))
    t.teardown(() => client.close())
    t.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'the route declares task-augmented tools/call')
    const audit = (await client.listTools()).tools.find((tool) => tool.name === 'audit')
    t.equal(audit?.execution?.taskSupport, 'optional', 'tools/list says audit may run as a task')
    const seen: string[] = []
    let result: unknown
    for await (const message of client.experimental.tasks.callToolStream({ name: 'audit', arguments: { environment: 'staging' } }, undefined, { task: { ttl: 60_000 } })) {
      seen.push(message.type)
      if (message.type === 'result') result = message.result
      if (message.type === 'error') t.fail(`the stream failed: ${message.error.message}`)
    }
    t.equal(seen[0], 'taskCreated', 'a task was created')
    t.equal(seen.at(-1), 'result', 'and its result collected')
    t.match(result, { structuredContent: { environment: 'staging', audited: 4 } })
  })
}
