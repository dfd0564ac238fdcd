/** The server capabilities and identity a route declares, built once from its config. */
import type { RouteConfig } from '../config/types.ts'
import type { Implementation, JsonObject, ServerCapabilities } from '../wire/mcp-types.ts'

/** The `capabilities` object of the InitializeResult. */
export function serverCapabilities(route: RouteConfig): ServerCapabilities {
  const { capabilities } = route
  const declared: ServerCapabilities = {}
  if (capabilities.tools !== false) declared.tools = { listChanged: capabilities.tools.list_changed }
  if (capabilities.prompts !== false) declared.prompts = { listChanged: capabilities.prompts.list_changed }
  if (capabilities.resources !== false) {
    declared.resources = { subscribe: capabilities.resources.subscribe, listChanged: capabilities.resources.list_changed }
  }
  if (capabilities.logging) declared.logging = {}
  if (capabilities.completions) declared.completions = {}
  if (capabilities.tools !== false && route.tasks.enabled) declared.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } }
  return declared
}

/**
 * The capabilities 2026-07-28 discover declares: core tasks are gone there, and the tasks extension
 * is declared under `extensions` instead.
 */
export function discoverCapabilities(route: RouteConfig, initialize: ServerCapabilities): JsonObject {
  const { tasks, ...rest } = initialize as JsonObject
  if (tasks === undefined) return rest
  return { ...rest, extensions: { 'io.modelcontextprotocol/tasks': {} } }
}

/** The `serverInfo` object of the InitializeResult. */
export function serverInfo(route: RouteConfig): Implementation {
  const { name, version, title, description, website_url: websiteUrl, icons } = route.server
  const info: Implementation & JsonObject = { name, version }
  if (title !== undefined) info.title = title
  if (description !== undefined) info.description = description
  if (websiteUrl !== undefined) info.websiteUrl = websiteUrl
  if (icons !== undefined) info.icons = icons
  return info
}
