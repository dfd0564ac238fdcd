/**
 * Tasks on a proxy route, with server-everything over stdio as the upstream (its
 * `simulate-research-query` runs only as a task: taskSupport "required", four 1 s stages) and the
 * official 1.x client. A client's task request is the gateway's to run; the upstream's tasks are
 * followed by the gateway, so the client never meets an upstream task id it could not poll here.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t, { type Test } from 'tap'
import { gatewayWith } from '../e2e/harness.ts'
import { everythingServer } from '../fixtures/everything-server.ts'

t.setTimeout(90_000)

const upstreams = [{ name: 'everything', command: [process.execPath, everythingServer, 'stdio'], timeout: 30 }]
const gateway = await gatewayWith(t, [
  { location: '/plain', server: { name: 'plain', version: '1.0.0' }, upstreams, prefix: 'never' },
  { location: '/tasks', server: { name: 'tasks', version: '1.0.0' }, upstreams, prefix: 'never', tasks: { enabled: true } },
])

async function connect(t: Test, location: string): Promise<Client> {
  const client = new Client({ name: 'proxy-tasks', version: '1.0.0' }, { capabilities: { tasks: {} } })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${location}`)))
  t.teardown(() => client.close())
  return client
}
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

t.test('a route without tasks: the upstream-only task tool is an ordinary tool, run as a task upstream and waited for', async (t) => {
  const client = await connect(t, '/plain')
  const listed = (await client.listTools()).tools.find((tool) => tool.name === 'simulate-research-query')
  t.ok(listed, 'listed')
  t.equal(listed?.execution?.taskSupport, undefined, 'without the upstream\'s taskSupport "required", which no call here could meet')
  const started = Date.now()
  const result = await client.callTool({ name: 'simulate-research-query', arguments: { topic: 'gateways' } }, undefined, { timeout: 30_000 })
  t.match(text(result), /gateways/, "the task's result, as the call's answer")
  t.ok(Date.now() - started >= 3000, 'after the upstream task ran its stages')
  t.notOk(JSON.stringify(result).includes('related-task'), 'no upstream task id reaches the client')
  t.equal(text(await client.callTool({ name: 'echo', arguments: { message: 'hi' } })), 'Echo: hi', 'ordinary tools are unchanged')
})

t.test('a route with tasks: the client runs the proxied tool as a gateway task and follows it here', async (t) => {
  const client = await connect(t, '/tasks')
  const tools = (await client.listTools()).tools
  t.equal(tools.find((tool) => tool.name === 'simulate-research-query')?.execution?.taskSupport, 'optional', 'the route offers tasks for its proxied tools')
  t.equal(tools.find((tool) => tool.name === 'echo')?.execution?.taskSupport, 'optional', 'every one of them')
  const seen: string[] = []
  let result: unknown
  for await (const message of client.experimental.tasks.callToolStream({ name: 'simulate-research-query', arguments: { topic: 'proxies' } }, undefined, { task: { ttl: 60_000 }, timeout: 30_000 })) {
    seen.push(message.type)
    if (message.type === 'result') result = message.result
    if (message.type === 'error') t.fail(`the stream failed: ${message.error.message}`)
  }
  t.equal(seen[0], 'taskCreated', 'a task was created (by the gateway)')
  t.equal(seen.at(-1), 'result', 'and its result collected through tasks/result here')
  t.match(text(result), /proxies/, "the upstream task's result")
  const listed = await client.experimental.tasks.listTasks()
  t.ok(listed.tasks.some((task) => task.status === 'completed'), 'the task is in this route\'s table')

  const plain = await client.callTool({ name: 'echo', arguments: { message: 'again' } })
  t.equal(text(plain), 'Echo: again', 'a call without a task request is answered as usual')
})
