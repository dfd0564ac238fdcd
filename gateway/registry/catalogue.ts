/**
 * Run-time changes to what a route or a session lists, as data. A handler's setup runs on every
 * worker, so every worker holds the same components with their callbacks; what a run-time
 * `register`, `unregister*` or `replace*` changes is an overlay: which of those components are shown,
 * with which descriptions, plus data resources (text, no code). The overlay is JSON kept in the store,
 * and each worker builds the same view from its own setup and the overlay:
 *
 *   setup registry (every worker) ──► route view = setup ⊕ route overlay ──► session view = route view ⊕ session overlay
 *
 * A closure made at run time exists on one worker only, so a component whose callback was not
 * declared at setup is refused (MCP_EDGE_UNDECLARED_COMPONENT) rather than served by one worker and
 * unknown to the others.
 */
import { EdgeError } from '../wire/errors.ts'
import { invalid } from './component-checks.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { Component, CompletionCallback } from './components.ts'
import type { ComponentKind } from './context.ts'
import { toEntry, type Entry } from './entries.ts'
import type { ListName, Registry } from './registry.ts'

/** One component in an overlay: 0 hidden, 1 shown as set up, an object: shown with these fields (data). */
export type OverlayEntry = 0 | 1 | JsonObject

/** What a route or a session changed at run time, applied in order over what it started with. */
export interface Overlay {
  /** Kinds whose starting components are all dropped (a `replace*`); `entries` then adds back. */
  cleared?: ComponentKind[]
  /** By key (`tool:name`, `resource:uri`, …), in the order the changes were made. */
  entries: Record<string, OverlayEntry>
}

/** A run-time change, checked (see `checkedEntries`) before it is applied. */
export type CatalogueChange =
  | { readonly op: 'register'; readonly entries: ReadonlyArray<readonly [string, OverlayEntry]> }
  | { readonly op: 'unregister'; readonly key: string }
  | { readonly op: 'replace'; readonly kinds: readonly ComponentKind[]; readonly entries: ReadonlyArray<readonly [string, OverlayEntry]> }

const LIST_OF: Record<ComponentKind, ListName> = { tool: 'tools', prompt: 'prompts', resource: 'resources', template: 'resources' }
const KINDS: ReadonlySet<string> = new Set(['tool', 'prompt', 'resource', 'template'])

/** The kind a key names (`tool:x` → tool). */
export function kindOf(key: string): ComponentKind {
  return key.slice(0, key.indexOf(':')) as ComponentKind
}

/** The key of a component (`tool:name`, `resource:uri`, `template:uriTemplate`). */
export function keyOf(component: Component): string {
  switch (component.kind) {
    case 'tool':
    case 'prompt':
      return `${component.kind}:${component.name}`
    case 'resource':
      return `resource:${component.uri}`
    case 'template':
      return `template:${component.uriTemplate}`
  }
}

/** The lists a change touches (for list_changed). */
export function listsOf(change: CatalogueChange): Set<ListName> {
  if (change.op === 'unregister') return new Set([LIST_OF[kindOf(change.key)]])
  const lists = new Set(change.entries.map(([key]) => LIST_OF[kindOf(key)]))
  if (change.op === 'replace') for (const kind of change.kinds) lists.add(LIST_OF[kind])
  return lists
}

/**
 * The overlay entries of components registered at run time: each is checked as at setup, then
 * matched with what setup declared. A data resource (made from a string) is data and always goes; any
 * other component must carry the very callback (and completions) setup declared under its key.
 */
export function checkedEntries(setup: Registry, components: readonly Component[]): Array<readonly [string, OverlayEntry]> {
  return components.map((component) => {
    const checked = toEntry(component)
    const data = dataOf(component)
    if (isDataResource(component)) return [checked.key, data] as const
    const declared = setup.entryOf(checked.key)
    if (declared === undefined) {
      throw new EdgeError('MCP_EDGE_UNDECLARED_COMPONENT', `${checked.key} was not declared at setup: declare it there (server.declare or server.register), then register that component at run time`)
    }
    const original = componentOf(declared)
    if (component.callback !== original.callback || !sameCompletions(component, original)) {
      throw new EdgeError('MCP_EDGE_UNDECLARED_COMPONENT', `${checked.key} carries a callback made at run time, which other workers do not have: register the component declared at setup (its descriptions may change)`)
    }
    return [checked.key, JSON.stringify(data) === JSON.stringify(dataOf(original)) ? 1 : data] as const
  })
}

/** Whether `view` lists the component `key` names. */
export function listed(view: Registry, key: string): boolean {
  const name = key.slice(key.indexOf(':') + 1)
  switch (kindOf(key)) {
    case 'tool':
      return view.tool(name) !== undefined
    case 'prompt':
      return view.prompt(name) !== undefined
    case 'resource':
      return view.resource(name) !== undefined
    case 'template':
      return view.template(name) !== undefined
  }
}

const REPLACE: Record<ComponentKind, string> = { tool: 'Tools', prompt: 'Prompts', resource: 'Resources', template: 'ResourceTemplates' }
const UNREGISTER: Record<ComponentKind, string> = { tool: 'Tool', prompt: 'Prompt', resource: 'Resource', template: 'ResourceTemplate' }

/**
 * Throws when a run-time `register` names a component `view` already lists, or one twice: as at setup
 * (and in lua-resty-mcp), replacing is `replace*`'s job. `where` says whose catalogue ("this route").
 */
export function checkNew(view: Registry, change: CatalogueChange, where: string): void {
  if (change.op !== 'register') return
  const seen = new Set<string>()
  for (const [key] of change.entries) {
    const kind = kindOf(key)
    if (seen.has(key) || listed(view, key)) {
      const how = seen.has(key) ? 'given twice' : `already registered on ${where} (use replace${REPLACE[kind]}, or unregister${UNREGISTER[kind]} first)`
      throw invalid(`duplicate ${kind} ${JSON.stringify(key.slice(kind.length + 1))}: ${how}`)
    }
    seen.add(key)
  }
}

/** `overlay` with `change` made (a new object: the stored one may still be in use). */
export function applyChange(overlay: Overlay, change: CatalogueChange): Overlay {
  const entries = { ...overlay.entries }
  let cleared = overlay.cleared
  if (change.op === 'unregister') {
    delete entries[change.key]
    entries[change.key] = 0
    return { cleared, entries }
  }
  if (change.op === 'replace') {
    cleared = [...new Set([...(cleared ?? []), ...change.kinds])]
    for (const key of Object.keys(entries)) if (change.kinds.includes(kindOf(key))) delete entries[key]
  }
  for (const [key, entry] of change.entries) {
    delete entries[key]
    entries[key] = entry
  }
  return cleared === undefined ? { entries } : { cleared, entries }
}

/** Reads a stored overlay; anything malformed counts as no change. */
export function parseOverlay(json: string | undefined): Overlay {
  if (json === undefined) return { entries: {} }
  try {
    const value = JSON.parse(json) as Partial<Overlay>
    const entries = value.entries !== null && typeof value.entries === 'object' ? value.entries : {}
    const cleared = Array.isArray(value.cleared) ? value.cleared.filter((kind) => KINDS.has(kind)) : undefined
    return cleared === undefined ? { entries } : { cleared, entries }
  } catch {
    return { entries: {} }
  }
}

/**
 * The view `start` becomes under `overlay`: the registry a request is served from. Components are
 * found in `setup` (every worker's own), so the same overlay gives the same view everywhere; a key
 * this worker's setup lacks (a rolling deploy of a changed handler) is left out.
 */
export function buildView(setup: Registry, start: Registry, overlay: Overlay): Registry {
  const cleared = new Set(overlay.cleared ?? [])
  const entries = new Map<string, Entry>()
  for (const entry of start.entries()) if (!cleared.has(kindOf(entry.key))) entries.set(entry.key, entry)
  for (const [key, change] of Object.entries(overlay.entries)) {
    if (change === 0) {
      entries.delete(key)
      continue
    }
    const entry = change === 1 ? setup.entryOf(key) : entryFromData(setup, key, change)
    if (entry !== undefined) entries.set(key, entry)
  }
  return setup.derive(entries.values())
}

function entryFromData(setup: Registry, key: string, data: JsonObject): Entry | undefined {
  const kind = kindOf(key)
  try {
    if (kind === 'resource' && typeof data.text === 'string') {
      const text = data.text
      return toEntry({ ...data, kind, callback: () => text } as unknown as Component)
    }
    const declared = setup.entryOf(key)
    if (declared === undefined) return undefined
    const original = componentOf(declared) as Component & { completions?: unknown }
    return toEntry({ ...data, kind, callback: original.callback, completions: original.completions } as unknown as Component)
  } catch {
    return undefined // checked when it was written; a stored overlay cannot make this worker fail
  }
}

function isDataResource(component: Component): boolean {
  return component.kind === 'resource' && typeof component.text === 'string'
}

/** A component's fields without its code, as JSON. */
function dataOf(component: Component): JsonObject {
  const { kind: _kind, callback: _callback, completions: _completions, ...data } = component as Component & { completions?: unknown }
  return JSON.parse(JSON.stringify(data)) as JsonObject
}

function componentOf(entry: Entry): Component {
  if ('tool' in entry) return entry.tool
  if ('prompt' in entry) return entry.prompt
  if ('resource' in entry) return entry.resource
  return entry.template
}

function sameCompletions(a: Component, b: Component): boolean {
  const ours = (a as { completions?: Record<string, CompletionCallback> }).completions ?? {}
  const theirs = (b as { completions?: Record<string, CompletionCallback> }).completions ?? {}
  return Object.entries(ours).every(([name, callback]) => theirs[name] === callback)
}
