/** Reading common params of list and call methods. */
import type { SessionRecord } from '../../store/store.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'

/** The session's disabled components as a set, or undefined when none (the common case allocates nothing). */
export function hiddenOf(record: SessionRecord): ReadonlySet<string> | undefined {
  return record.hidden.length === 0 ? undefined : new Set(record.hidden)
}

/** `params.cursor` when it is a string; a cursor of another type is invalid. */
export function cursorOf(params: JsonObject): string | undefined {
  return typeof params.cursor === 'string' ? params.cursor : undefined
}
