/** The `RouteServer` a handler module receives: the route's registry plus its sessions. */
import type { Component, Prompt, Resource, ResourceTemplate, Tool } from '../registry/components.ts'
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

  register(...components: Component[]): void {
    this.#endpoint.registry.register(...components)
  }

  unregisterTool(name: string): boolean {
    return this.#endpoint.registry.unregister('tool', name)
  }

  unregisterPrompt(name: string): boolean {
    return this.#endpoint.registry.unregister('prompt', name)
  }

  unregisterResource(uri: string): boolean {
    return this.#endpoint.registry.unregister('resource', uri)
  }

  unregisterResourceTemplate(uriTemplate: string): boolean {
    return this.#endpoint.registry.unregister('template', uriTemplate)
  }

  replaceTools(tools: Tool[]): void {
    this.#endpoint.registry.replaceTools(tools)
  }

  replacePrompts(prompts: Prompt[]): void {
    this.#endpoint.registry.replacePrompts(prompts)
  }

  replaceResources(resources: Resource[], templates?: ResourceTemplate[]): void {
    this.#endpoint.registry.replaceResources(resources, templates)
  }

  replaceResourceTemplates(templates: ResourceTemplate[]): void {
    this.#endpoint.registry.replaceResourceTemplates(templates)
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
