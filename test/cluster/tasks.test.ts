// Tasks across processes: two hosts on one Redis, and two workers of one host on the cluster store.
// A task made on one is polled and collected on the other, cancelled from the other (the cancellation
// reaches the callback's signal where it runs), and a task whose process is killed mid-run is reported
// failed by the other within producer_timeout, so no poller waits forever.
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { post, rawSession, SseReader } from '../e2e/sse-reader.ts'
import { startRedis } from '../store/redis-server.ts'
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts'
import { roundRobin } from './round-robin.ts'

// Four processes start at once (each compiles its TypeScript): slow on a busy machine.
t.setTimeout(240_000)
const START_MS = 120_000

const handler = fileURLToPath(new URL('./fixtures/tasks.ts', import.meta.url))
const route = { location: '/tasks', handler, server: { name: 'tasks', version: '1.0.0' }, producer_timeout: 1, tasks: { enabled: true, poll_interval: 0.05 } }
const redis = await startRedis(t)
const store = { type: 'redis', url: redis.url, key_prefix: 'tasks:' }
const [a, b, workers] = (await Promise.all([
  startGatewayProcess(t, { store, routes: [route] }, 1, START_MS),
  startGatewayProcess(t, { store, routes: [route] }, 1, START_MS),
  startGatewayProcess(t, { workers: 2, routes: [route] }, 2, START_MS),
])) as [GatewayProcess, GatewayProcess, GatewayProcess]

// `any`: parsed JSON from the wire, checked by the assertions that read it.
type Json = any // eslint-disable-line @typescript-eslint/no-explicit-any
const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
}
let ids = 0

/** One stateless (2026-07-28) request that declares the tasks extension; its result (or error). */
async function call(base: string, method: string, params: Record<string, unknown>): Promise<Json> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method }
  const name = method === 'tools/call' ? params.name : params.taskId
  if (typeof name === 'string') headers['mcp-name'] = name
  const body = { jsonrpc: '2.0', id: ++ids, method, params: { ...params, _meta: envelope } }
  const answer = (await (await fetch(`${base}/tasks`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) })).json()) as Json
  return answer.result ?? answer
}

const crunch = (base: string, seconds: number): Promise<Json> => call(base, 'tools/call', { name: 'crunch', arguments: { seconds } })

/** Polls tasks/get on `base` until `done` holds; the last task seen. */
async function until(base: string, taskId: string, done: (task: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const task = await call(base, 'tasks/get', { taskId })
    if (done(task) || Date.now() > deadline) return task
    await sleep(50)
  }
}

const runningPid = (task: Json): number => Number(/running on (\d+)/.exec(task.statusMessage ?? '')?.[1])
const aborted = (gateway: GatewayProcess, taskId: string) => gateway.logged((line) => line.msg === 'handler log' && line.data === `crunch ${taskId} aborted`, 5000)

t.test('hosts: a task made on one host is polled and collected on the other', async (t) => {
  const created = await crunch(a.url, 0.5)
  t.match(created, { resultType: 'task', status: 'working', ttlMs: 3_600_000, pollIntervalMs: 50 })
  const first = await call(b.url, 'tasks/get', { taskId: created.taskId })
  t.match(first, { resultType: 'complete', taskId: created.taskId }, 'the other host knows it at once')
  const done = await until(b.url, created.taskId, (task) => task.status === 'completed')
  t.equal(done.status, 'completed')
  t.equal(done.result.structuredContent.pid, a.child.pid, 'the callback ran where the task was made')
  t.equal(runningPid(done), a.child.pid, 'and said so in its status message')
})

t.test('hosts: cancelled from the other host, the callback\'s signal fires where it runs', async (t) => {
  const created = await crunch(a.url, 30)
  const ack = await call(b.url, 'tasks/cancel', { taskId: created.taskId })
  t.match(ack, { resultType: 'complete' })
  t.notOk('status' in ack, 'an empty acknowledgement')
  await aborted(a, created.taskId)
  t.pass('host a heard the cancellation')
  await sleep(200)
  t.match(await call(a.url, 'tasks/get', { taskId: created.taskId }), { status: 'cancelled' }, 'and it stays cancelled')
})

t.test('hosts: a 2025-11-25 session\'s tasks/result on the other host waits for the end, then answers', async (t) => {
  const sessionId = await rawSession(`${a.url}/tasks`)
  const made = await (await post(`${a.url}/tasks`, sessionId, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'crunch', arguments: { seconds: 0.5 }, task: { ttl: 60_000 } } })).text()
  const taskId = (JSON.parse(made.replace(/^[\s\S]*?data: /, '').split('\n')[0]!) as Json).result.task.taskId as string
  t.ok(taskId, 'a CreateTaskResult')
  const started = Date.now()
  const response = await post(`${b.url}/tasks`, sessionId, { jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId } })
  const events = response.headers.get('content-type')?.includes('text/event-stream') ? await new SseReader(response).rest() : [{ data: await response.text() }]
  const answer = JSON.parse(events.at(-1)!.data) as Json
  t.match(answer.result, { structuredContent: { pid: a.child.pid }, _meta: { 'io.modelcontextprotocol/related-task': { taskId } } })
  t.ok(Date.now() - started >= 200, 'it waited for the task to finish')
  const listed = JSON.parse((await (await post(`${b.url}/tasks`, sessionId, { jsonrpc: '2.0', id: 3, method: 'tasks/list' })).text()).replace(/^[\s\S]*?data: /, '').split('\n')[0]!) as Json
  t.same(listed.result.tasks.map((task: Json) => task.taskId), [taskId], 'tasks/list on the other host shows the session\'s task')
})

t.test('two workers: made on one, collected and cancelled through the others, a killed worker\'s task fails', async (t) => {
  const balancer = await roundRobin(t, [workers.url])
  const created = await crunch(balancer.url, 0.3)
  const done = await until(balancer.url, created.taskId, (task) => task.status === 'completed')
  t.equal(done.status, 'completed', 'polled and collected through the balancer')
  t.equal(done.result.structuredContent.pid, runningPid(done))

  const long = await crunch(balancer.url, 30)
  const running = await until(balancer.url, long.taskId, (task) => runningPid(task) > 0)
  await call(balancer.url, 'tasks/cancel', { taskId: long.taskId })
  const heard = await aborted(workers, long.taskId)
  t.equal(heard.pid, runningPid(running), 'the worker running it heard the cancellation')

  const doomed = await crunch(balancer.url, 60)
  const victim = runningPid(await until(balancer.url, doomed.taskId, (task) => runningPid(task) > 0))
  process.kill(victim, 'SIGKILL')
  const started = Date.now()
  // A connection the primary deals to a worker it has not yet seen die is lost: wait until it has.
  await workers.logged((line) => line.role === 'primary' && line.workerPid === victim)
  const failed = await until(balancer.url, doomed.taskId, (task) => task.status === 'failed')
  const waited = Date.now() - started
  t.match(failed, { status: 'failed', error: { code: -32603, message: /worker running this task stopped/ } })
  t.ok(waited < 5000, `reported failed after ${waited} ms (producer_timeout 1 s)`)
})

t.test('hosts: its host killed mid-task, the other host reports the task failed within producer_timeout', async (t) => {
  const created = await crunch(a.url, 60)
  await until(b.url, created.taskId, (task) => runningPid(task) > 0)
  await a.stop('SIGKILL')
  const started = Date.now()
  const failed = await until(b.url, created.taskId, (task) => task.status === 'failed')
  const waited = Date.now() - started
  t.match(failed, { status: 'failed', error: { code: -32603, message: /worker running this task stopped/ } })
  t.notOk('result' in failed, 'no result')
  t.ok(waited < 5000, `reported failed after ${waited} ms (producer_timeout 1 s)`)
})
