/**
 * The components of one route: checked and compiled on registration, listed in registration order
 * with cached pages, looked up by name or URI on every call, and watched for list_changed.
 *
 *   register / unregister / replace*  ──► toEntry (check, compile, describe) ──► Map per kind
 *                                                                             ├─► Pager (cached pages) ──► list*
 *                                                                             └─► onChange listeners (once per list per call)
 */
import type { ComponentKind } from './context.ts'
import type { Component, Prompt, Resource, ResourceTemplate, Tool } from './components.ts'
import type { PromptDescriptor, ResourceDescriptor, ResourceTemplateDescriptor, ToolDescriptor } from './descriptors.ts'
import { invalid } from './component-checks.ts'
import { toEntry, type Entry, type PromptEntry, type ResourceEntry, type TemplateEntry, type ToolEntry } from './entries.ts'
import { Pager, type Page } from './pagination.ts'
import type { TemplateVariables } from './uri-template.ts'

/** The list a change concerns; template changes count as `resources` (one list_changed covers both). */
export type ListName = 'tools' | 'prompts' | 'resources'
/** Told which list changed; the protocol layer sends the matching `notifications/…/list_changed`. */
export type ChangeListener = (list: ListName) => void

/** How a route's registry pages its lists (the route's `pagination` config). */
export interface RegistryOptions {
  /** Page size of each list; 0 sends the whole list in one page. Templates use the `resources` size. */
  pagination: { tools: number; prompts: number; resources: number }
}

/** What a `resources/read` URI resolved to: a static resource, or a template with the URI's variables. */
export type ResolvedResource =
  | { readonly kind: 'resource'; readonly entry: ResourceEntry }
  | { readonly kind: 'template'; readonly entry: TemplateEntry; readonly variables: TemplateVariables }

const LIST_OF: Record<ComponentKind, ListName> = { tool: 'tools', prompt: 'prompts', resource: 'resources', template: 'resources' }
const LIST_ORDER: readonly ListName[] = ['tools', 'prompts', 'resources']

/** The per-route registry the protocol layer lists, looks up and invokes components from. */
export class Registry {
  readonly #tools = new Map<string, ToolEntry>()
  readonly #prompts = new Map<string, PromptEntry>()
  readonly #resources = new Map<string, ResourceEntry>()
  readonly #templates = new Map<string, TemplateEntry>()
  readonly #toolPages: Pager<'tools', ToolDescriptor>
  readonly #promptPages: Pager<'prompts', PromptDescriptor>
  readonly #resourcePages: Pager<'resources', ResourceDescriptor>
  readonly #templatePages: Pager<'resourceTemplates', ResourceTemplateDescriptor>
  readonly #listeners = new Set<ChangeListener>()
  /** Components declared at setup but not listed: what run-time changes may show (see catalogue.ts). */
  readonly #declared = new Map<string, Entry>()
  readonly #options: RegistryOptions

  constructor(options: RegistryOptions) {
    this.#options = options
    const { tools, prompts, resources } = options.pagination
    this.#toolPages = new Pager('tools', tools, this.#tools, 'tool:')
    this.#promptPages = new Pager('prompts', prompts, this.#prompts, 'prompt:')
    this.#resourcePages = new Pager('resources', resources, this.#resources, 'resource:')
    this.#templatePages = new Pager('resourceTemplates', resources, this.#templates, 'template:')
  }

  /**
   * Adds components. A name (or URI, URI template) already registered, or given twice, is an error
   * naming it (MCP_EDGE_HANDLER_INVALID), as in lua-resty-mcp: replacing is `replace*`'s job. All or
   * nothing: throws before any change.
   */
  register(...components: Component[]): void {
    const entries = components.map(toEntry)
    checkUnique(entries, (kind, name) => this.#mapOf(kind).has(name))
    const changed = new Set<ListName>()
    for (const entry of entries) changed.add(this.#put(entry))
    this.#changed(changed)
  }

  /** Removes one component by kind and name (URI, URI template); false when there was none. */
  unregister(kind: ComponentKind, key: string): boolean {
    const map = this.#mapOf(kind)
    const entry = map.get(key)
    if (entry === undefined) return false
    map.delete(key)
    this.#changed(new Set([LIST_OF[kind]]))
    return true
  }

  /** Replaces every tool at once (one `tools` change). */
  replaceTools(tools: readonly Tool[]): void {
    this.#replace(['tool'], tools)
  }

  /** Replaces every prompt at once (one `prompts` change). */
  replacePrompts(prompts: readonly Prompt[]): void {
    this.#replace(['prompt'], prompts)
  }

  /**
   * Replaces every static resource (one `resources` change); the templates too when `templates` is
   * given (lua-resty-mcp's `replace_resources(resources, templates)`), else they stay as they are.
   */
  replaceResources(resources: readonly Resource[], templates?: readonly ResourceTemplate[]): void {
    if (templates === undefined) this.#replace(['resource'], resources)
    else this.#replace(['resource', 'template'], [...resources, ...templates])
  }

  /** Replaces every resource template, leaving the static resources alone (one `resources` change). */
  replaceResourceTemplates(templates: readonly ResourceTemplate[]): void {
    this.#replace(['template'], templates)
  }

  /** Calls `listener` after every change, once per changed list per call; returns the unsubscribe function. */
  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** How many tools are registered (what `check` reports). */
  get toolCount(): number {
    return this.#tools.size
  }

  /** A page of `tools/list`; `hidden` holds the keys (`tool:name`) this session has disabled. */
  listTools(cursor?: string, hidden?: ReadonlySet<string>): Page<'tools', ToolDescriptor> {
    return this.#toolPages.page(cursor ?? undefined, hidden)
  }

  /** A page of `prompts/list`; `hidden` holds keys like `prompt:name`. */
  listPrompts(cursor?: string, hidden?: ReadonlySet<string>): Page<'prompts', PromptDescriptor> {
    return this.#promptPages.page(cursor ?? undefined, hidden)
  }

  /** A page of `resources/list`; `hidden` holds keys like `resource:uri`. */
  listResources(cursor?: string, hidden?: ReadonlySet<string>): Page<'resources', ResourceDescriptor> {
    return this.#resourcePages.page(cursor ?? undefined, hidden)
  }

  /** A page of `resources/templates/list`; `hidden` holds keys like `template:uriTemplate`. */
  listResourceTemplates(cursor?: string, hidden?: ReadonlySet<string>): Page<'resourceTemplates', ResourceTemplateDescriptor> {
    return this.#templatePages.page(cursor ?? undefined, hidden)
  }

  /** The tool called `name`, unless missing or hidden. */
  tool(name: string, hidden?: ReadonlySet<string>): ToolEntry | undefined {
    return visible(this.#tools.get(name), hidden)
  }

  /** The prompt called `name`, unless missing or hidden. */
  prompt(name: string, hidden?: ReadonlySet<string>): PromptEntry | undefined {
    return visible(this.#prompts.get(name), hidden)
  }

  /** The static resource at exactly `uri`, unless missing or hidden. */
  resource(uri: string, hidden?: ReadonlySet<string>): ResourceEntry | undefined {
    return visible(this.#resources.get(uri), hidden)
  }

  /** The template registered as exactly `uriTemplate`, unless missing or hidden. */
  template(uriTemplate: string, hidden?: ReadonlySet<string>): TemplateEntry | undefined {
    return visible(this.#templates.get(uriTemplate), hidden)
  }

  /** Every component as its kind and name (URI, URI template), for policies that look at all of them (scopes). */
  *components(): Generator<readonly [ComponentKind, string]> {
    for (const name of this.#tools.keys()) yield ['tool', name]
    for (const name of this.#prompts.keys()) yield ['prompt', name]
    for (const uri of this.#resources.keys()) yield ['resource', uri]
    for (const uriTemplate of this.#templates.keys()) yield ['template', uriTemplate]
  }

  /** The static resource at `uri`, else the first visible template (in registration order) that matches it. */
  resolveResource(uri: string, hidden?: ReadonlySet<string>): ResolvedResource | undefined {
    const resource = this.resource(uri, hidden)
    if (resource !== undefined) return { kind: 'resource', entry: resource }
    for (const entry of this.#templates.values()) {
      if (hidden?.has(entry.key)) continue
      const variables = entry.matcher.match(uri)
      if (variables !== undefined) return { kind: 'template', entry, variables }
    }
    return undefined
  }

  /**
   * Declares components without listing them: they exist on every worker (the handler's setup runs on
   * each), so a run-time change may show them route-wide or to one session. Checked like `register`.
   */
  declare(...components: Component[]): void {
    const entries = components.map(toEntry)
    checkUnique(entries, (kind, name) => this.#mapOf(kind).has(name) || this.#declared.has(`${kind}:${name}`))
    for (const entry of entries) this.#declared.set(entry.key, entry)
  }

  /** The entry registered or declared under `key` (`tool:name`, …): what a run-time change may show. */
  entryOf(key: string): Entry | undefined {
    const kind = key.slice(0, key.indexOf(':')) as ComponentKind
    const name = key.slice(kind.length + 1)
    return (LIST_OF[kind] === undefined ? undefined : this.#mapOf(kind).get(name)) ?? this.#declared.get(key)
  }

  /** Every listed entry, tools, prompts, resources then templates, each in list order. */
  *entries(): Generator<Entry> {
    yield* this.#tools.values()
    yield* this.#prompts.values()
    yield* this.#resources.values()
    yield* this.#templates.values()
  }

  /** A registry listing `entries` (already checked), paged like this one: a catalogue view. */
  derive(entries: Iterable<Entry>): Registry {
    const view = new Registry(this.#options)
    for (const entry of entries) view.#put(entry)
    return view
  }

  // Map.set on an existing key keeps its position: a replaced component stays where clients saw it.
  #put(entry: Entry): ListName {
    if ('tool' in entry) {
      this.#tools.set(entry.tool.name, entry)
      return 'tools'
    }
    if ('prompt' in entry) {
      this.#prompts.set(entry.prompt.name, entry)
      return 'prompts'
    }
    if ('resource' in entry) this.#resources.set(entry.resource.uri, entry)
    else this.#templates.set(entry.template.uriTemplate, entry)
    return 'resources'
  }

  #replace(kinds: readonly ComponentKind[], components: readonly Component[]): void {
    for (const component of components) {
      const kind = (component as { kind?: unknown } | null)?.kind
      if (!kinds.includes(kind as ComponentKind)) {
        throw invalid(`Invalid component: expected ${kinds.join(' or ')}, got ${JSON.stringify(kind)}`)
      }
    }
    const entries = components.map(toEntry)
    checkUnique(entries, () => false)
    for (const kind of kinds) this.#mapOf(kind).clear()
    for (const entry of entries) this.#put(entry)
    this.#changed(new Set(kinds.map((kind) => LIST_OF[kind])))
  }

  #mapOf(kind: ComponentKind): Map<string, Entry> {
    switch (kind) {
      case 'tool':
        return this.#tools
      case 'prompt':
        return this.#prompts
      case 'resource':
        return this.#resources
      case 'template':
        return this.#templates
    }
  }

  #changed(lists: ReadonlySet<ListName>): void {
    if (lists.has('tools')) this.#toolPages.invalidate()
    if (lists.has('prompts')) this.#promptPages.invalidate()
    if (lists.has('resources')) {
      this.#resourcePages.invalidate()
      this.#templatePages.invalidate()
    }
    // Every listener hears every change even if one throws; the first failure is rethrown afterwards.
    let failure: { error: unknown } | undefined
    for (const list of LIST_ORDER) {
      if (!lists.has(list)) continue
      for (const listener of [...this.#listeners]) {
        try {
          listener(list)
        } catch (error) {
          failure ??= { error }
        }
      }
    }
    if (failure !== undefined) throw failure.error
  }
}

const KIND_WORD: Record<ComponentKind, string> = { tool: 'tool', prompt: 'prompt', resource: 'resource', template: 'resource template' }
const UNREGISTER: Record<ComponentKind, string> = { tool: 'Tool', prompt: 'Prompt', resource: 'Resource', template: 'ResourceTemplate' }
const REPLACE: Record<ComponentKind, string> = { tool: 'Tools', prompt: 'Prompts', resource: 'Resources', template: 'ResourceTemplates' }

/** Throws on an entry the registry already holds (`taken`), or that appears twice in `entries`. */
function checkUnique(entries: readonly Entry[], taken: (kind: ComponentKind, name: string) => boolean): void {
  const seen = new Set<string>()
  for (const { key } of entries) {
    // An entry's key is `kind:name` (see entries.ts).
    const colon = key.indexOf(':')
    const kind = key.slice(0, colon) as ComponentKind
    const name = key.slice(colon + 1)
    if (seen.has(key) || taken(kind, name)) {
      const what = `${KIND_WORD[kind]} ${JSON.stringify(name)}`
      const how = seen.has(key)
        ? 'given twice'
        : `already registered on this route (use replace${REPLACE[kind]}, or unregister${UNREGISTER[kind]} first)`
      throw invalid(`duplicate ${what}: ${how}`)
    }
    seen.add(key)
  }
}

function visible<E extends Entry>(entry: E | undefined, hidden: ReadonlySet<string> | undefined): E | undefined {
  return entry !== undefined && hidden?.has(entry.key) === true ? undefined : entry
}
