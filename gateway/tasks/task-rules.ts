/**
 * Which shape of tasks a request gets (2025-11-25 core tasks or the 2026-07-28 extension), who owns
 * a task, and the refusals task methods answer with: rules the task service and the task methods
 * share, with no state.
 */
import type { SessionRecord } from '../store/store.ts'
import type { Caller } from '../wire/caller.ts'
import { EdgeCode, McpError, RpcCode, type EdgeCodeName } from '../wire/errors.ts'
import { STATEFUL_VERSIONS } from '../wire/versions.ts'
import { TASKS_EXTENSION } from './task-record.ts'

const stateful: ReadonlySet<string> = new Set(STATEFUL_VERSIONS)

/** True for a 2025-11-25 (or earlier) session: core tasks; false for 2026-07-28: the extension. */
export function isCoreEra(record: SessionRecord): boolean {
  return stateful.has(record.protocolVersion)
}

/** True when a 2026-07-28 request's envelope declares the tasks extension. */
export function declaresTasks(record: SessionRecord): boolean {
  const extensions = (record.clientCapabilities as { extensions?: Record<string, unknown> }).extensions
  return typeof extensions === 'object' && extensions !== null && extensions[TASKS_EXTENSION] !== undefined
}

/** The -32021 error of a request that needs the tasks extension. */
export function tasksRequired(what: string): McpError {
  return new McpError(RpcCode.MissingCapability, `${what} needs the ${TASKS_EXTENSION} extension: declare it under capabilities.extensions`, {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  })
}

/** A task refusal as the JSON-RPC error a method answers with (its row's code and message). */
export function taskRefusal(code: EdgeCodeName, message?: string): McpError {
  const row = EdgeCode[code]
  return new McpError(row.rpc, message ?? row.message)
}

/** Who may see a task: the session, else the principal of a stateless request, else anyone with its id. */
export function ownerOf(record: SessionRecord, caller: Caller): string {
  if (record.id !== '') return `s:${record.id}`
  return caller.principal === undefined ? 'a:' : `p:${caller.principal}`
}

