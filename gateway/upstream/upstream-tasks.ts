/**
 * Tasks on a proxy route. The route's task table (gateway/tasks/) is the gateway's own, in the
 * store, and knows no upstream's task ids, so a client's `task` request never goes up as it is
 * (its tasks/get would find nothing here). Instead:
 *
 *   tools/call of a tool its upstream runs only as a task ("required"):
 *     ─► tools/call + task ─► CreateTaskResult ─► tasks/result (waits; the upstream's questions come on it)
 *     ─► the task's result, answered as an ordinary tools/call (a client cancel ─► tasks/cancel upstream)
 *   tools/call + task from the client, on a route with tasks on:
 *     ─► a gateway task (task-service.ts) whose work is the call above, followed like any other
 *   tools/list ─► execution.taskSupport "optional" where the route takes tasks, none where it does not
 *
 * The upstream call inside is one upstream request, bounded by the upstream's `timeout`.
 */
import type { RequestContext } from '../registry/context.ts'
import type { ToolEntry } from '../registry/entries.ts'
import type { ValidateFunction } from '../registry/json-schema.ts'
import type { SessionRecord } from '../store/store.ts'
import type { TaskService } from '../tasks/task-service.ts'
import { RELATED_TASK } from '../tasks/task-record.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { cancellationOf, type ForwardExtra, type ProxyRoute } from './proxy-route.ts'

/** The upstream's `execution.taskSupport` of a listed tool, if it says one. */
export function upstreamTaskSupport(item: JsonObject): unknown {
  const execution = item.execution as JsonObject | undefined
  return typeof execution === 'object' && execution !== null ? execution.taskSupport : undefined
}

/**
 * The `execution` a proxied tool is listed with: task support is the route's to offer, not the
 * upstream's. The item's own object when nothing changes (no copy on the usual path).
 */
export function proxiedExecution(item: JsonObject, routeTakesTasks: boolean): JsonObject | undefined {
  const execution = item.execution as JsonObject | undefined
  const support = upstreamTaskSupport(item)
  if (routeTakesTasks) return support === 'optional' ? execution : { ...execution, taskSupport: 'optional' }
  if (support === undefined) return execution
  const { taskSupport: _dropped, ...rest } = execution!
  return Object.keys(rest).length > 0 ? rest : undefined
}

/** Calls a tool its upstream runs only as a task, and waits for the task's result. */
export async function callUpstreamTask(proxy: ProxyRoute, record: SessionRecord, upstream: string, params: JsonObject, ctx: RequestContext, extra: ForwardExtra): Promise<JsonObject> {
  const created = await proxy.forward(record, upstream, 'tools/call', { ...params, task: {} }, ctx, extra)
  const taskId = (created.task as JsonObject | undefined)?.taskId
  // An upstream that answered at once (it ran the call after all) has nothing to wait for.
  if (typeof taskId !== 'string') return created
  const cancellation = cancellationOf(ctx)
  const cancel = (): void => void proxy.forward(record, upstream, 'tasks/cancel', { taskId }, undefined, { who: ctx?.caller }).catch(() => undefined)
  cancellation.addEventListener('abort', cancel)
  try {
    const result = await proxy.forward(record, upstream, 'tasks/result', { taskId }, ctx)
    return withoutRelatedTask(result)
  } finally {
    cancellation.removeEventListener('abort', cancel)
  }
}

/** The result without the upstream's related-task note: that task id means nothing to the client. */
function withoutRelatedTask(result: JsonObject): JsonObject {
  const meta = result._meta as JsonObject | undefined
  if (meta === undefined || !(RELATED_TASK in meta)) return result
  const { [RELATED_TASK]: _dropped, ...rest } = meta
  const answer: JsonObject = { ...result }
  if (Object.keys(rest).length > 0) answer._meta = rest
  else delete answer._meta
  return answer
}

/** Arguments are the upstream's to check: it answers a bad call with its own error. */
const ANY_INPUT = Object.assign(() => true, { errors: null }) as unknown as ValidateFunction

/** A proxied tools/call the client asked to run as a task: a gateway task whose work is `call`. */
export function runAsGatewayTask(
  tasks: TaskService,
  name: string,
  params: JsonObject,
  record: SessionRecord,
  ctx: RequestContext,
  call: (params: JsonObject, ctx: RequestContext) => Promise<JsonObject>,
): JsonObject | Promise<JsonObject> {
  const entry = {
    key: `tool:${name}`,
    tool: {
      kind: 'tool',
      name,
      taskSupport: 'optional',
      callback: (args: JsonObject, taskCtx: RequestContext) => call({ name, arguments: args }, taskCtx),
    },
    descriptor: { name, inputSchema: { type: 'object' } },
    validateInput: ANY_INPUT,
    validateOutput: undefined,
  } as unknown as ToolEntry
  return tasks.callTool(entry, params, record, ctx)
}
