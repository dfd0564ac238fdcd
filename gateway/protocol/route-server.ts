/** The `RouteServer` a handler module receives: the route's registry plus its sessions. */
import { checkedEntries, type CatalogueChange } from '../registry/catalogue.ts'
import type { Component, Prompt, Resource, ResourceTemplate, Tool } from '../registry/components.ts'
import type { ComponentKind } from '../registry/context.ts'
import { EdgeError } from '../wire/errors.ts'
import type { McpEndpoint } from './endpoint.ts'
import type { JsonObject, LogLevel } from '../wire/mcp-types.ts'
import type { RouteEvent, RouteEventListener, RouteServer } from '../registry/route-server-api.ts'

export class RouteServerImpl implements RouteServer {
  readonly location: string
  readonly options: Readonly<JsonObject>
  readonly #endpoint: McpEndpoint
  readonly #background = new Set<Promise<unknown>>()

  constructor(endpoint: McpEndpoint) {
    this.#endpoint = endpoint
    this.location = endpoint.route.location
    this.options = endpoint.route.options
  }

  register(...components: Component[]): Promise<void> {
    if (!this.#endpoint.running) {
      this.#endpoint.catalogues.setup.register(...components)
      return Promise.resolve()
    }
    return this.#change(() => ({ op: 'register', entries: checkedEntries(this.#endpoint.catalogues.setup, components) })).then(() => undefined)
  }

  declare(...components: Component[]): void {
    if (this.#endpoint.running) throw new EdgeError('MCP_EDGE_UNDECLARED_COMPONENT', 'server.declare works during setup only, where every worker runs it')
    this.#endpoint.catalogues.setup.declare(...components)
  }

  unregisterTool(name: string): Promise<boolean> {
    return this.#unregister('tool', name)
  }

  unregisterPrompt(name: string): Promise<boolean> {
    return this.#unregister('prompt', name)
  }

  unregisterResource(uri: string): Promise<boolean> {
    return this.#unregister('resource', uri)
  }

  unregisterResourceTemplate(uriTemplate: string): Promise<boolean> {
    return this.#unregister('template', uriTemplate)
  }

  replaceTools(tools: Tool[]): Promise<void> {
    return this.#replace(['tool'], tools, () => this.#endpoint.catalogues.setup.replaceTools(tools))
  }

  replacePrompts(prompts: Prompt[]): Promise<void> {
    return this.#replace(['prompt'], prompts, () => this.#endpoint.catalogues.setup.replacePrompts(prompts))
  }

  replaceResources(resources: Resource[], templates?: ResourceTemplate[]): Promise<void> {
    const kinds: ComponentKind[] = templates === undefined ? ['resource'] : ['resource', 'template']
    return this.#replace(kinds, [...resources, ...(templates ?? [])], () => this.#endpoint.catalogues.setup.replaceResources(resources, templates))
  }

  replaceResourceTemplates(templates: ResourceTemplate[]): Promise<void> {
    return this.#replace(['template'], templates, () => this.#endpoint.catalogues.setup.replaceResourceTemplates(templates))
  }

  #unregister(kind: ComponentKind, key: string): Promise<boolean> {
    if (!this.#endpoint.running) return Promise.resolve(this.#endpoint.catalogues.setup.unregister(kind, key))
    return this.#change(() => ({ op: 'unregister', key: `${kind}:${key}` }))
  }

  #replace(kinds: ComponentKind[], components: Component[], duringSetup: () => void): Promise<void> {
    if (!this.#endpoint.running) {
      duringSetup()
      return Promise.resolve()
    }
    return this.#change(() => ({ op: 'replace', kinds, entries: checkedEntries(this.#endpoint.catalogues.setup, components) })).then(() => undefined)
  }

  /**
   * A run-time change of the route's catalogue. A mistake of the handler's (an undeclared callback,
   * an invalid component) throws at once, as during setup; a store failure rejects, and is logged
   * too, so a handler that does not await the change does not crash the worker.
   */
  #change(make: () => CatalogueChange): Promise<boolean> {
    const done = this.#endpoint.catalogues.changeRoute(make())
    done.catch((error: unknown) => this.#endpoint.logger.warn({ err: error }, 'a run-time catalogue change failed'))
    return done
  }

  resourceUpdated(uri: string): Promise<void> {
    return this.#endpoint.resourceUpdated(uri)
  }

  async log(level: LogLevel, data: unknown, logger?: string): Promise<void> {
    this.#endpoint.logToRoute(level, data, logger)
  }

  on(event: RouteEvent, listener: RouteEventListener): void {
    this.#endpoint.on(event, listener)
  }

  background(task: Promise<unknown>): void {
    const tracked = task.catch((error: unknown) => this.#endpoint.logger.error({ err: error }, 'background task failed'))
    this.#background.add(tracked)
    void tracked.finally(() => this.#background.delete(tracked))
  }

  async waitBackgroundTasks(timeoutMs?: number): Promise<boolean> {
    const all = Promise.allSettled([...this.#background]).then(() => true)
    if (timeoutMs === undefined) return await all
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))
    try {
      return await Promise.race([all, timedOut])
    } finally {
      clearTimeout(timer)
    }
  }

  async shutdown(): Promise<void> {
    this.#endpoint.close()
  }
}
