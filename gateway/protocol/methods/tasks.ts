/**
 * The task methods, answered from the store on any worker (gateway/tasks/). 2025-11-25 sessions:
 * tasks/get, tasks/result (waits for the end, then the tool's result or error), tasks/list (the
 * session's tasks) and tasks/cancel (the task; an error once it finished). 2026-07-28 requests, which
 * must declare the tasks extension: tasks/get (the result or error inlined), tasks/update (answers
 * to the task's questions) and tasks/cancel, both acknowledged with an empty result.
 */
import { McpError, RpcCode } from '../../wire/errors.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { SessionRecord } from '../../store/store.ts'
import { coreTask, detailedTask, RELATED_TASK } from '../../tasks/task-record.ts'
import type { TaskService } from '../../tasks/task-service.ts'
import { declaresTasks, isCoreEra, taskRefusal, tasksRequired } from '../../tasks/task-rules.ts'
import type { MethodHost, MethodTable } from './method-handler.ts'

function service(host: MethodHost): TaskService {
  if (host.tasks === undefined) throw new McpError(RpcCode.MethodNotFound, 'This route has no tasks')
  return host.tasks
}

/** The service for a request of `era`, after the 2026-07-28 capability check. */
function serviceFor(host: MethodHost, record: SessionRecord, method: string, era: 'core' | 'any'): TaskService {
  const core = isCoreEra(record)
  if (era === 'core' && !core) throw new McpError(RpcCode.MethodNotFound, `Method not found: ${method}`)
  if (!core && !declaresTasks(record)) throw tasksRequired(method)
  return service(host)
}

function extensionOnly(host: MethodHost, record: SessionRecord, method: string): TaskService {
  if (isCoreEra(record)) throw new McpError(RpcCode.MethodNotFound, `Method not found: ${method}`)
  return serviceFor(host, record, method, 'any')
}

export const taskMethods: MethodTable = {
  'tasks/get': async (host, record, params, ctx) => {
    const task = await serviceFor(host, record, 'tasks/get', 'any').get(params.taskId, record, ctx.caller)
    return isCoreEra(record) ? coreTask(task) : detailedTask(task)
  },

  'tasks/result': async (host, record, params, ctx) => {
    const task = await serviceFor(host, record, 'tasks/result', 'core').finished(params.taskId, record, ctx.caller, ctx.signal)
    const related = { [RELATED_TASK]: { taskId: task.id } }
    if (task.status === 'completed' && task.result !== undefined) {
      return { ...task.result, _meta: { ...(task.result._meta as JsonObject | undefined), ...related } }
    }
    if (task.status === 'failed' && task.error !== undefined) throw new McpError(task.error.code, task.error.message, task.error.data)
    throw taskRefusal('MCP_EDGE_REQUEST_CANCELLED', 'The task was cancelled')
  },

  'tasks/list': async (host, record, _params, ctx) => {
    const tasks = await serviceFor(host, record, 'tasks/list', 'core').list(record, ctx.caller)
    return { tasks: tasks.map(coreTask) }
  },

  'tasks/cancel': async (host, record, params, ctx) => {
    const { task, changed } = await serviceFor(host, record, 'tasks/cancel', 'any').cancel(params.taskId, record, ctx.caller)
    if (!isCoreEra(record)) return {}
    if (!changed) throw taskRefusal('MCP_EDGE_TASK_FINISHED', `The task already ${task.status === 'cancelled' ? 'was cancelled' : task.status}`)
    return coreTask(task)
  },

  'tasks/update': async (host, record, params, ctx) => {
    await extensionOnly(host, record, 'tasks/update').update(params.taskId, params.inputResponses, record, ctx.caller)
    return {}
  },
}
