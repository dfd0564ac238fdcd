/**
 * What the store keeps of a task, and how each protocol revision shows it. One record serves both:
 * 2025-11-25's experimental core tasks (a `task` object, `ttl`, `pollInterval`, the result fetched
 * with tasks/result) and 2026-07-28's `io.modelcontextprotocol/tasks` extension (flat fields with
 * `resultType`, `ttlMs`, `pollIntervalMs`, the result or error inlined on tasks/get).
 */
import type { JsonObject } from '../wire/mcp-types.ts'

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

/** The extension id a 2026-07-28 client declares under `capabilities.extensions` to take tasks. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'
/** The `_meta` key that ties a 2025-11-25 message to its task. */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task'

/** A server→client request a task waits on, as a 2026-07-28 `inputRequests` entry. */
export interface TaskInputRequest {
  method: string
  params: JsonObject
}

/** A JSON-RPC error a task failed with. */
export interface TaskError {
  code: number
  message: string
  data?: unknown
}

export interface TaskRecord {
  readonly id: string
  readonly route: string
  /** Who may see it: `s:<session id>`, `p:<principal>`, or `a:` (a stateless request on an open route). */
  readonly owner: string
  /** Which wire shape its client reads: 2025-11-25 core tasks or the 2026-07-28 extension. */
  readonly era: 'core' | 'extension'
  readonly tool: string
  /** The worker running the callback (its heartbeat says whether it still lives). */
  readonly worker: string
  readonly createdAt: number
  readonly ttlMs: number
  readonly pollIntervalMs: number
  status: TaskStatus
  updatedAt: number
  statusMessage?: string
  /** The CallToolResult, once completed. */
  result?: JsonObject
  /** The protocol error, once failed. */
  error?: TaskError
  /** What the callback waits for (input_required), by key. */
  inputRequests?: Record<string, TaskInputRequest>
  /** The client's answers (tasks/update) not yet taken by the callback, by key. */
  inputResponses?: Record<string, unknown>
}

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled'
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** The 2025-11-25 `Task` object (tasks/get, tasks/list, tasks/cancel, the status notification). */
export function coreTask(record: TaskRecord): JsonObject {
  const task: JsonObject = {
    taskId: record.id,
    status: record.status,
    ttl: record.ttlMs,
    createdAt: iso(record.createdAt),
    lastUpdatedAt: iso(record.updatedAt),
    pollInterval: record.pollIntervalMs,
  }
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage
  return task
}

/** The 2026-07-28 task fields shared by CreateTaskResult and tasks/get. */
function extensionTask(record: TaskRecord): JsonObject {
  const task: JsonObject = {
    taskId: record.id,
    status: record.status,
    createdAt: iso(record.createdAt),
    lastUpdatedAt: iso(record.updatedAt),
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
  }
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage
  return task
}

/** What tools/call answers when it made a task. */
export function createTaskResult(record: TaskRecord): JsonObject {
  if (record.era === 'core') return { task: coreTask(record), _meta: { [RELATED_TASK]: { taskId: record.id } } }
  return { ...extensionTask(record), resultType: 'task' }
}

/** The 2026-07-28 DetailedTask of tasks/get: the result, error or pending input requests inlined. */
export function detailedTask(record: TaskRecord): JsonObject {
  const task = extensionTask(record)
  if (record.status === 'completed' && record.result !== undefined) task.result = record.result
  if (record.status === 'failed' && record.error !== undefined) task.error = record.error as unknown as JsonObject
  if (record.status === 'input_required' && record.inputRequests !== undefined) task.inputRequests = record.inputRequests as unknown as JsonObject
  return task
}
