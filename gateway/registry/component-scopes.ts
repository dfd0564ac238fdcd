/**
 * Per-component scopes: the route's `scopes` config maps glob patterns of component names (URIs for
 * resources, URI templates for templates) to the scopes a caller needs to use them. A component the
 * caller may not use is absent from its lists, and using it is refused with insufficient_scope.
 *
 *   scopes: { tools: { "deploy": [deploy], "db_*": [db.read] }, resources: { "secret://*": [admin] } }
 *
 * Every matching pattern counts: a component needs the union of their scopes. What a set of scopes
 * hides is computed once per distinct scope set (a verified token's set is shared by its requests)
 * and again only when the registry changes.
 */
import type { ScopesConfig } from '../config/types.ts'
import { McpError, RpcCode } from '../wire/errors.ts'
import type { ComponentKind } from './context.ts'
import type { Registry } from './registry.ts'

interface Rule {
  readonly pattern: RegExp
  readonly scopes: readonly string[]
}

const NOTHING: readonly string[] = Object.freeze([])
const NAME_CACHE_LIMIT = 4096

/** `*` matches any run of characters, `?` one; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
  return new RegExp(`^${source}$`, 's')
}

function rules(patterns: Record<string, string[]>): Rule[] {
  return Object.entries(patterns).map(([glob, scopes]) => ({ pattern: globToRegExp(glob), scopes }))
}

interface Hidden {
  /** The catalogue view the keys were computed for: a run-time change makes a new one. */
  readonly view: Registry
  readonly keys: ReadonlySet<string> | undefined
}

/** The scope rules of one route, checked against its registry. */
export class ComponentScopes {
  readonly #rules: Record<ComponentKind, Rule[]>
  /** Scopes each name needs, per kind (names come from requests, so the cache is bounded). */
  readonly #needs = new Map<string, readonly string[]>()
  readonly #hidden = new WeakMap<ReadonlySet<string>, Hidden>()

  /** The rules of `config`, or undefined when no component needs a scope (nothing to check on the hot path). */
  static from(config: ScopesConfig): ComponentScopes | undefined {
    const { tools, prompts, resources, resource_templates } = config
    const empty = [tools, prompts, resources, resource_templates].every((patterns) => Object.keys(patterns).length === 0)
    return empty ? undefined : new ComponentScopes(config)
  }

  private constructor(config: ScopesConfig) {
    this.#rules = { tool: rules(config.tools), prompt: rules(config.prompts), resource: rules(config.resources), template: rules(config.resource_templates) }
  }

  /** Every scope the component needs (empty when it needs none). */
  needs(kind: ComponentKind, name: string): readonly string[] {
    const key = `${kind}:${name}`
    let needed = this.#needs.get(key)
    if (needed === undefined) {
      const union = new Set<string>()
      for (const rule of this.#rules[kind]) if (rule.pattern.test(name)) for (const scope of rule.scopes) union.add(scope)
      needed = union.size === 0 ? NOTHING : [...union]
      if (this.#needs.size >= NAME_CACHE_LIMIT) this.#needs.clear()
      this.#needs.set(key, needed)
    }
    return needed
  }

  /**
   * The scopes a caller holding `held` lacks for the component, or undefined when it may use it. An
   * open route's caller (`held` undefined) may use everything.
   */
  missing(kind: ComponentKind, name: string, held: ReadonlySet<string> | undefined): readonly string[] | undefined {
    if (held === undefined) return undefined
    const needed = this.needs(kind, name)
    for (const scope of needed) if (!held.has(scope)) return needed.filter((s) => !held.has(s))
    return undefined
  }

  /** Keys (`tool:deploy`) of the components of `view` a caller holding `held` may not use; undefined when none. */
  hiddenFor(held: ReadonlySet<string> | undefined, view: Registry): ReadonlySet<string> | undefined {
    if (held === undefined) return undefined
    const cached = this.#hidden.get(held)
    if (cached !== undefined && cached.view === view) return cached.keys
    const keys = new Set<string>()
    for (const [kind, name] of view.components()) {
      if (this.missing(kind, name, held) !== undefined) keys.add(`${kind}:${name}`)
    }
    const hidden = keys.size === 0 ? undefined : keys
    this.#hidden.set(held, { view, keys: hidden })
    return hidden
  }
}

/**
 * The JSON-RPC error for a component the caller lacks scopes for, where no HTTP challenge can be sent
 * (a WebSocket message); over HTTP the access phase answers 403 with the challenge before dispatch.
 */
export function insufficientScope(kind: ComponentKind, name: string, missing: readonly string[]): McpError {
  return new McpError(RpcCode.ServerError, `Forbidden: insufficient scope for ${kind} ${name}: needs ${missing.join(' ')}`, { error: 'insufficient_scope', scope: missing.join(' ') })
}
