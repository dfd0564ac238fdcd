/**
 * The `server` a handler module receives: one per route and worker. It registers components and
 * reaches the route's sessions (list_changed, resources/updated, logs), mirroring lua-resty-mcp's
 * server session in TypeScript idiom.
 */
import type { Component, Prompt, Resource, ResourceTemplate, Tool } from './components.ts'
import type { SessionView } from './context.ts'
import type { JsonObject, LogLevel } from '../wire/mcp-types.ts'

/** Route events a handler can listen to; the listener gets the session and the notification's params. */
export type RouteEvent = 'initialized' | 'roots/list_changed' | 'resources/subscribe' | 'resources/unsubscribe'
export type RouteEventListener = (session: SessionView, params: JsonObject) => void | Promise<void>

export interface RouteServer {
  /** The route's location, e.g. `/mcp`. */
  readonly location: string
  /** The route's `options` block from the config, for the handler's own settings. */
  readonly options: Readonly<JsonObject>
  /** Adds components; a name (or URI) already registered is an error naming it. Sends list_changed to live sessions. */
  register(...components: Component[]): void
  unregisterTool(name: string): boolean
  unregisterPrompt(name: string): boolean
  unregisterResource(uri: string): boolean
  unregisterResourceTemplate(uriTemplate: string): boolean
  replaceTools(tools: Tool[]): void
  replacePrompts(prompts: Prompt[]): void
  /** Replaces the static resources, and the templates too when `templates` is given (else they stay). */
  replaceResources(resources: Resource[], templates?: ResourceTemplate[]): void
  /** Replaces the resource templates only. */
  replaceResourceTemplates(templates: ResourceTemplate[]): void
  /** Sends `notifications/resources/updated` to every session subscribed to `uri`. */
  resourceUpdated(uri: string): Promise<void>
  /** Sends `notifications/message` to every session of the route whose level lets it through. */
  log(level: LogLevel, data: unknown, logger?: string): Promise<void>
  on(event: RouteEvent, listener: RouteEventListener): void
  /** Tracks work a handler started outside a request, so shutdown can wait for it. */
  background(task: Promise<unknown>): void
  /** Resolves `true` when every background task has settled, `false` when `timeoutMs` passed first. */
  waitBackgroundTasks(timeoutMs?: number): Promise<boolean>
  /** Ends every session of this route on this worker. */
  shutdown(): Promise<void>
}
