/** Reading common params of list and call methods, and what the caller may see. */
import type { Caller } from '../../wire/caller.ts'
import { insufficientScope } from '../../registry/component-scopes.ts'
import type { SessionRecord } from '../../store/store.ts'
import type { ComponentKind } from '../../registry/context.ts'
import type { MethodHost } from './method-handler.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { Registry } from '../../registry/registry.ts'

/**
 * The components this request may not see: the session's disabled ones and those the caller lacks
 * scopes for. undefined when none (the common case allocates nothing).
 */
export function hiddenOf(host: MethodHost, view: Registry, record: SessionRecord, caller: Caller): ReadonlySet<string> | undefined {
  const byScope = host.scopes?.hiddenFor(caller.scopes, view)
  if (record.hidden.length === 0) return byScope
  const hidden = new Set(record.hidden)
  if (byScope !== undefined) for (const key of byScope) hidden.add(key)
  return hidden
}

/** Throws the insufficient-scope error when the caller may not use the component. */
export function checkScopes(host: MethodHost, caller: Caller, kind: ComponentKind, name: string): void {
  const missing = host.scopes?.missing(kind, name, caller.scopes)
  if (missing !== undefined) throw insufficientScope(kind, name, missing)
}

/** `params.cursor` when it is a string; a cursor of another type is invalid. */
export function cursorOf(params: JsonObject): string | undefined {
  return typeof params.cursor === 'string' ? params.cursor : undefined
}
