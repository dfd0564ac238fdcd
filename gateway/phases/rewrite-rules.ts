/**
 * The rules of the rewrite phase, compiled once per rules object: which names clients see, which
 * components they never see, and what descriptions, titles and annotations the lists carry. The
 * lists are rewritten on their way out; a request naming a component is translated on its way in, so
 * every phase after this one (access scopes, content, filter, log) names components as the route's
 * handler or upstreams do.
 *
 *   tools/list ─► [name, title, description, annotations replaced; hidden dropped] ─► client
 *   tools/call {name: exposed} ─► original name ─► the route      hidden / a renamed one's old name ─► unknown
 */
import type { ComponentRewrite, RewriteConfig } from '../config/types.ts'
import { UriTemplate } from '../registry/uri-template.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

/** The component kinds a rewrite names, as the list methods return them. */
export type RewriteKind = 'tools' | 'prompts' | 'resources' | 'resource_templates'

/** Each list method: the kind it lists, and the key of its items in the result. */
export const LISTS: ReadonlyMap<string, { kind: RewriteKind; key: string; id: string }> = new Map([
  ['tools/list', { kind: 'tools', key: 'tools', id: 'name' }],
  ['prompts/list', { kind: 'prompts', key: 'prompts', id: 'name' }],
  ['resources/list', { kind: 'resources', key: 'resources', id: 'uri' }],
  ['resources/templates/list', { kind: 'resource_templates', key: 'resourceTemplates', id: 'uriTemplate' }],
])

const KINDS: readonly RewriteKind[] = ['tools', 'prompts', 'resources', 'resource_templates']

interface KindRules {
  /** original name (URI, template) → its change. */
  readonly changes: ReadonlyMap<string, ComponentRewrite>
  /** exposed name → original, for the renamed (tools and prompts). */
  readonly renamedFrom: ReadonlyMap<string, string>
}

/** One rules object, ready to apply. */
export class CompiledRewrite {
  readonly #kinds: Record<RewriteKind, KindRules>
  /** Hidden templates: a read of a URI one of them matches is refused as unknown. */
  readonly #hiddenTemplates: readonly UriTemplate[]

  constructor(rules: RewriteConfig) {
    const kinds = {} as Record<RewriteKind, KindRules>
    for (const kind of KINDS) {
      const changes = new Map<string, ComponentRewrite>()
      const renamedFrom = new Map<string, string>()
      for (const [original, change] of Object.entries(rules[kind] ?? {})) {
        if (change === null || typeof change !== 'object') throw new TypeError(`rewrite.${kind}.${original}: not an object`)
        changes.set(original, change)
        if ((kind === 'tools' || kind === 'prompts') && typeof change.name === 'string' && change.name !== original && change.hidden !== true) {
          const earlier = renamedFrom.get(change.name)
          if (earlier !== undefined) throw new TypeError(`rewrite.${kind}: "${original}" and "${earlier}" are both renamed to "${change.name}"`)
          renamedFrom.set(change.name, original)
        }
      }
      kinds[kind] = { changes, renamedFrom }
    }
    this.#kinds = kinds
    const hidden: UriTemplate[] = []
    for (const [template, change] of kinds.resource_templates.changes) {
      if (change.hidden !== true) continue
      try {
        hidden.push(new UriTemplate(template))
      } catch {
        // Not a template anything could list: nothing to hide.
      }
    }
    this.#hiddenTemplates = hidden
  }

  /**
   * The original name of the component a client calls `exposed` (a tool or prompt name, or a
   * resource URI), or undefined when the client must be told it is unknown: hidden, or the old name of
   * a renamed one.
   */
  original(kind: RewriteKind, exposed: string): string | undefined {
    const rules = this.#kinds[kind]
    const renamed = rules.renamedFrom.get(exposed)
    if (renamed !== undefined) return renamed
    const change = rules.changes.get(exposed)
    if (change !== undefined && (change.hidden === true || (typeof change.name === 'string' && change.name !== exposed && (kind === 'tools' || kind === 'prompts')))) return undefined
    if (kind === 'resources' && this.#hiddenTemplates.length > 0) {
      for (const template of this.#hiddenTemplates) if (template.match(exposed) !== undefined) return undefined
    }
    return exposed
  }

  /** A list result as clients see it: a copy where something changed, `result` itself where nothing did. */
  list(method: string, result: JsonObject): JsonObject {
    const list = LISTS.get(method)
    if (list === undefined) return result
    const items = result[list.key]
    const rules = this.#kinds[list.kind]
    if (!Array.isArray(items) || rules.changes.size === 0) return result
    let changed = false
    const out: unknown[] = []
    for (const item of items) {
      const id = (item as JsonObject | null)?.[list.id]
      const change = typeof id === 'string' ? rules.changes.get(id) : undefined
      if (change === undefined) {
        out.push(item)
        continue
      }
      changed = true
      if (change.hidden === true) continue
      out.push(applyChange(item as JsonObject, change))
    }
    return changed ? { ...result, [list.key]: out } : result
  }
}

function applyChange(item: JsonObject, change: ComponentRewrite): JsonObject {
  const copy: JsonObject = { ...item }
  if (change.name !== undefined) copy.name = change.name
  if (change.title !== undefined) copy.title = change.title
  if (change.description !== undefined) copy.description = change.description
  if (change.annotations !== undefined) copy.annotations = change.annotations as JsonObject
  return copy
}

/** The config's problems with one route's `rewrite:` (two components renamed to one name), as messages. */
export function rewriteProblems(rules: RewriteConfig): string[] {
  try {
    void new CompiledRewrite(rules)
    return []
  } catch (error) {
    return [(error as Error).message]
  }
}

/**
 * Lays `over` (a rewrite module's rules) on `base` (the route's own): per component, the module's
 * change replaces the route's.
 */
export function layered(base: RewriteConfig | undefined, over: RewriteConfig): RewriteConfig {
  if (base === undefined) return over
  const merged: RewriteConfig = {}
  for (const kind of KINDS) {
    if (base[kind] === undefined && over[kind] === undefined) continue
    merged[kind] = { ...base[kind], ...over[kind] }
  }
  return merged
}
