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
  /**
   * Adds components; a name (or URI) already registered at setup is an error naming it. During setup the change is immediate (every worker runs the same setup). At run
   * time it reaches every worker and host through the store before list_changed goes to the route's
   * sessions, and resolves then; a component must then be one setup registered or declared (the same
   * callback; its descriptions may change), or a data resource (`mcp.resource(uri, name, text)`),
   * else it throws MCP_EDGE_UNDECLARED_COMPONENT: a closure made at run time exists on one worker only.
   */
  register(...components: Component[]): Promise<void>
  /**
   * Setup only: components every worker holds but nobody lists yet, for run-time changes to show
   * (route-wide with `register`, or to one session with `ctx.session.register`).
   */
  declare(...components: Component[]): void
  /** Removes a component (route-wide; at run time on every worker); false when it was not listed. */
  unregisterTool(name: string): Promise<boolean>
  unregisterPrompt(name: string): Promise<boolean>
  unregisterResource(uri: string): Promise<boolean>
  unregisterResourceTemplate(uriTemplate: string): Promise<boolean>
  /** Replaces every component of a kind at once (at run time, with the rules of `register`). */
  replaceTools(tools: Tool[]): Promise<void>
  replacePrompts(prompts: Prompt[]): Promise<void>
  /** Replaces the static resources, and the templates too when `templates` is given (else they stay). */
  replaceResources(resources: Resource[], templates?: ResourceTemplate[]): Promise<void>
  /** Replaces the resource templates only. */
  replaceResourceTemplates(templates: ResourceTemplate[]): Promise<void>
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
