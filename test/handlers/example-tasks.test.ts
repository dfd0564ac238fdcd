/**
 * The example handler's `audit` as a task, driven by the official SDK 1.x client's experimental tasks
 * API (2025-11-25 core tasks) against config/gateway.yaml's /example route: the task is announced in
 * tools/list, created, polled and collected; listed for its session only; cancelled; and a result
 * over `tasks.max_result_bytes` fails the task with a clear error instead of being kept.
 */
import { CallToolResultSchema, McpError, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { DEFAULT_CONFIG_FILE, loadConfig } from '../../gateway/config/load.ts'
import { startGateway, type Gateway } from '../../gateway/server/server.ts'
import { connect } from '../e2e/harness.ts'
import { eventually } from '../fixtures/waiting.ts'

interface Test { teardown(fn: () => unknown): void }

async function start(t: Test, stepMs: number, maxResultBytes?: number): Promise<Gateway & { example: string }> {
  const config = await loadConfig(DEFAULT_CONFIG_FILE)
  config.listen = { host: '127.0.0.1', port: 0 }
  config.log.level = 'silent'
  const route = config.routes.find((r) => r.location === '/example')!
  route.options = { ...route.options, step_ms: stepMs }
  route.tasks = { ...route.tasks, poll_interval: 0.02, ...(maxResultBytes === undefined ? {} : { max_result_bytes: maxResultBytes }) }
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())
  return Object.assign(gateway, { example: `${gateway.url}/example` })
}

const audit = { name: 'audit', arguments: { environment: 'staging' } }

t.test('audit runs as a task: announced, created, polled and collected with the SDK', async (t) => {
  const gateway = await start(t, 20)
  const statuses: string[] = []
  const client = await connect(t, gateway.example, {}, (client) => {
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => void statuses.push(notification.params.status))
  })
  t.match(client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } }, 'the route declares core tasks')
  const { tools } = await client.listTools()
  t.match(tools.find((tool) => tool.name === 'audit'), { execution: { taskSupport: 'optional' } })
  t.notOk(tools.find((tool) => tool.name === 'deploy')?.execution, 'deploy is no task')

  const kinds: string[] = []
  let taskId = ''
  let result: Record<string, unknown> | undefined
  for await (const message of client.experimental.tasks.callToolStream(audit, CallToolResultSchema, { task: { ttl: 60_000 } })) {
    kinds.push(message.type)
    if (message.type === 'taskCreated') taskId = message.task.taskId
    if (message.type === 'result') result = message.result as Record<string, unknown>
    if (message.type === 'error') t.fail(message.error.message)
  }
  t.equal(kinds[0], 'taskCreated')
  t.ok(kinds.includes('taskStatus'), 'polled with tasks/get')
  t.equal(kinds.at(-1), 'result')
  t.match(result, { structuredContent: { environment: 'staging', audited: 4 }, _meta: { 'io.modelcontextprotocol/related-task': { taskId } } })

  await eventually(() => statuses.includes('completed'))
  t.ok(statuses.includes('completed'), 'notifications/tasks/status reached the session\'s stream')
  const task = await client.experimental.tasks.getTask(taskId)
  t.match(task, { taskId, status: 'completed', ttl: 60_000 })
  const { tasks } = await client.experimental.tasks.listTasks()
  t.same(tasks.map((listed) => listed.taskId), [taskId], 'tasks/list shows the session\'s task')

  const other = await connect(t, gateway.example)
  t.same((await other.experimental.tasks.listTasks()).tasks, [], 'another session sees none of it')
  await t.rejects(other.experimental.tasks.getTask(taskId), { code: -32602 }, 'nor can it read it')
})

t.test('a task cancelled while it runs ends cancelled; its result is an error', async (t) => {
  const gateway = await start(t, 2000)
  const client = await connect(t, gateway.example)
  const stream = client.experimental.tasks.callToolStream(audit, CallToolResultSchema, { task: { ttl: 60_000 } })
  const first = (await stream.next()).value
  if (first?.type !== 'taskCreated') throw new Error(`expected taskCreated, got ${JSON.stringify(first)}`)
  const taskId = first.task.taskId
  await stream.return(undefined)
  const cancelled = await client.experimental.tasks.cancelTask(taskId)
  t.match(cancelled, { taskId, status: 'cancelled' })
  t.equal((await client.experimental.tasks.getTask(taskId)).status, 'cancelled', 'it stays cancelled')
  await t.rejects(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema), McpError, 'tasks/result has no result for it')
  await t.rejects(client.experimental.tasks.cancelTask(taskId), { code: -32602 }, 'a finished task cannot be cancelled again')
})

t.test('a result over tasks.max_result_bytes is refused: the task fails and says why', async (t) => {
  const gateway = await start(t, 1, 64)
  const client = await connect(t, gateway.example)
  const messages = []
  for await (const message of client.experimental.tasks.callToolStream(audit, CallToolResultSchema, { task: { ttl: 60_000 } })) messages.push(message)
  const created = messages[0]
  if (created?.type !== 'taskCreated') throw new Error('no task')
  t.equal(messages.at(-1)?.type, 'error', 'the stream ends with an error')
  const task = await client.experimental.tasks.getTask(created.task.taskId)
  t.equal(task.status, 'failed')
  t.match(task.statusMessage, /too large to keep \(tasks\.max_result_bytes\): \d+ bytes, over 64/)
  await t.rejects(client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema), { code: -32603, message: /tasks\.max_result_bytes/ })
})
