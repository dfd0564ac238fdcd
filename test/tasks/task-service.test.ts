// The task service on one process's memory store: what the cross-process tests cannot reach quickly.
// A cancellation frees a callback waiting for input at once; the per-owner bound and the TTL bounds
// hold; another owner cannot see a task; a record whose worker stopped beating fails on the next poll;
// a completion racing a cancellation settles to one terminal status.
import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { mcp } from '../../gateway/registry/components.ts'
import { toEntry, type ToolEntry } from '../../gateway/registry/entries.ts'
import { MemoryStore } from '../../gateway/store/memory.ts'
import type { SessionRecord } from '../../gateway/store/store.ts'
import type { TaskRecord } from '../../gateway/tasks/task-record.ts'
import * as clientAnswers from '../../gateway/protocol/client-answers.ts'
import { TaskService } from '../../gateway/tasks/task-service.ts'
import type { ElicitResult, JsonObject } from '../../gateway/wire/mcp-types.ts'
import { fakeContext } from '../registry/fake-context.ts'

const EXTENSION = { 'io.modelcontextprotocol/tasks': {} }

function service(t: { teardown(fn: () => unknown): void }, tasks: object = {}): { tasks: TaskService; store: MemoryStore } {
  const config = configFromObject({ routes: [{ location: '/t', handler: 'x.ts', server: { name: 't', version: '1' }, producer_timeout: 0.3, tasks: { enabled: true, ...tasks } }] }, '<test>')
  const store = new MemoryStore({ eventCapacity: 16, cacheTtl: 60 })
  const route = config.routes[0]!
  const service = new TaskService({ route, store, logger: pino({ level: 'silent' }), notifySession: () => undefined, answerChecks: clientAnswers })
  t.teardown(async () => {
    service.close()
    await store.close()
  })
  return { tasks: service, store }
}

/** A 2026-07-28 request's stand-in record: no session, the extension (and elicitation) declared. */
const stateless = (principal?: string): SessionRecord => ({
  id: '', route: '/t', protocolVersion: '2026-07-28', clientInfo: undefined, clientCapabilities: { elicitation: {}, extensions: EXTENSION },
  principal, createdAt: 0, initialized: true, logLevel: undefined, subscriptions: [], hidden: [],
})
const session = (id: string): SessionRecord => ({ ...stateless(), id, protocolVersion: '2025-11-25', clientCapabilities: {} })
const caller = (principal?: string) => ({ principal, scopes: undefined, address: '127.0.0.1' })
function ctxOf(principal?: string) {
  const ctx = fakeContext()
  // What a 2026-07-28 request's session view says: the envelope's capabilities.
  return { ...ctx, caller: caller(principal), session: { ...ctx.session, clientCapabilities: stateless().clientCapabilities } }
}

const tool = (callback: Parameters<typeof mcp.tool>[1]): ToolEntry => toEntry(mcp.tool('work', callback, { taskSupport: 'optional' })) as ToolEntry

async function settled(tasks: TaskService, id: string, record: SessionRecord, principal?: string): Promise<TaskRecord> {
  for (let n = 0; n < 100; n++) {
    const task = await tasks.get(id, record, caller(principal))
    if (['completed', 'failed', 'cancelled'].includes(task.status)) return task
    await sleep(10)
  }
  throw new Error('the task never settled')
}

t.test('a cancellation frees a callback that waits for the client\'s input at once', async (t) => {
  const { tasks } = service(t)
  let outcome = 'still waiting'
  const entry = tool(async (_args, ctx) => {
    try {
      await ctx.elicit('Sure?', { type: 'object', properties: { ok: { type: 'boolean' } } })
      outcome = 'answered'
    } catch (error) {
      outcome = `rejected: ${String(error)}`
      throw error
    }
    return 'done'
  })
  const record = stateless()
  const created = (await tasks.callTool(entry, { name: 'work' }, record, ctxOf())) as JsonObject
  const taskId = created.taskId as string
  for (let n = 0; n < 50 && (await tasks.get(taskId, record, caller())).status !== 'input_required'; n++) await sleep(10)
  t.match(await tasks.get(taskId, record, caller()), { status: 'input_required', inputRequests: { 'elicitation-0': { method: 'elicitation/create' } } })
  await tasks.cancel(taskId, record, caller())
  await sleep(50)
  t.match(outcome, /^rejected: /, 'the waiting elicit rejected, not left to wait out the TTL')
  t.equal((await tasks.get(taskId, record, caller())).status, 'cancelled')
})

t.test('bounds: tasks per owner, the TTL a client may ask for', async (t) => {
  const { tasks } = service(t, { max_per_owner: 2, max_ttl: 60 })
  const entry = tool(() => 'quick')
  const record = session('s1')
  const first = (await tasks.callTool(entry, { name: 'work', task: { ttl: 10_000_000 } }, record, ctxOf())) as { task: { ttl: number } }
  t.equal(first.task.ttl, 60_000, 'a TTL over max_ttl is cut to it')
  const second = (await tasks.callTool(entry, { name: 'work', task: { ttl: 5000 } }, record, ctxOf())) as { task: { ttl: number } }
  t.equal(second.task.ttl, 5000, 'a shorter one is kept')
  await t.rejects(Promise.resolve().then(() => tasks.callTool(entry, { name: 'work', task: {} }, record, ctxOf())), { code: -32000, message: /tasks\.max_per_owner/ }, 'a third is refused')
  t.match(await tasks.callTool(entry, { name: 'work', task: {} }, session('s2'), ctxOf()), { task: { status: 'working' } }, 'another session has its own count')
  const optional = await tasks.callTool(entry, { name: 'work' }, session('s3'), ctxOf())
  t.match(optional, { content: [{ text: 'quick' }] }, 'no task asked: the call as usual')
})

t.test('a task is its owner\'s only: another session or principal gets -32602', async (t) => {
  const { tasks } = service(t)
  const entry = tool(() => 'mine')
  const made = (await tasks.callTool(entry, { name: 'work' }, stateless('alice'), ctxOf('alice'))) as JsonObject
  const taskId = made.taskId as string
  t.match(await settled(tasks, taskId, stateless('alice'), 'alice'), { status: 'completed', result: { content: [{ text: 'mine' }] } })
  await t.rejects(tasks.get(taskId, stateless('bob'), caller('bob')), { code: -32602 })
  await t.rejects(tasks.get(taskId, session('s1'), caller('alice')), { code: -32602 }, 'a session of the same principal is another owner')
  await t.rejects(tasks.get(42, stateless('alice'), caller('alice')), { code: -32602, message: /taskId must be a string/ })
})

t.test('a record whose worker stopped beating fails on the next poll, once', async (t) => {
  const { tasks, store } = service(t)
  const record = stateless()
  const now = Date.now()
  const orphan: TaskRecord = {
    id: 'orphan', route: '/t', owner: 'a:', era: 'extension', tool: 'work', worker: 'a-worker-that-died', createdAt: now, updatedAt: now,
    ttlMs: 60_000, pollIntervalMs: 100, status: 'working',
  }
  await store.tasks.write('task:orphan', JSON.stringify(orphan), 0, 60_000, 'a:')
  const failed = await tasks.get('orphan', record, caller())
  t.match(failed, { status: 'failed', error: { code: -32603, message: /worker running this task stopped/ } })
  t.same(await tasks.get('orphan', record, caller()), failed, 'and stays so')

  await store.tasks.write('worker:a-live-one', '1', 0, 60_000)
  await store.tasks.write('task:kept', JSON.stringify({ ...orphan, id: 'kept', worker: 'a-live-one' }), 0, 60_000, 'a:')
  t.equal((await tasks.get('kept', record, caller())).status, 'working', 'a worker that beats keeps its task')
})

t.test('a completion racing a cancellation settles to one terminal status', async (t) => {
  const { tasks } = service(t)
  const record = stateless()
  for (let n = 0; n < 10; n++) {
    const entry = tool(async () => {
      await sleep(n % 3)
      return 'raced'
    })
    const made = (await tasks.callTool(entry, { name: 'work' }, record, ctxOf())) as JsonObject
    const taskId = made.taskId as string
    await sleep(n % 3)
    await tasks.cancel(taskId, record, caller())
    const end = await settled(tasks, taskId, record)
    await sleep(10)
    const later = await tasks.get(taskId, record, caller())
    t.equal(later.status, end.status, `round ${n}: ${end.status}, and it stays so`)
    t.ok(end.status === 'cancelled' ? end.result === undefined : end.result !== undefined, 'a result only when completed')
  }
})

t.test('2025-11-25: a question goes to the session\'s stream, the task showing input_required meanwhile', async (t) => {
  const { tasks } = service(t)
  let answer: (value: ElicitResult) => void = () => undefined
  const ctx = fakeContext()
  const asking = { ...ctx, session: { ...ctx.session, elicit: () => new Promise<ElicitResult>((resolve) => (answer = resolve)) } }
  const entry = tool(async (_args, ctx) => {
    const reply = await ctx.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } })
    return `Hello, ${String(reply.content?.name)}`
  })
  const record = session('s9')
  const made = (await tasks.callTool(entry, { name: 'work', task: {} }, record, asking)) as { task: { taskId: string } }
  const taskId = made.task.taskId
  await sleep(30)
  t.equal((await tasks.get(taskId, record, caller())).status, 'input_required', 'waiting for the answer')
  answer({ action: 'accept', content: { name: 'Ada' } })
  t.match(await settled(tasks, taskId, record), { status: 'completed', result: { content: [{ text: 'Hello, Ada' }] } })
})
