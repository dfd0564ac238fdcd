/**
 * The method table of a route: JSON-RPC method name → handler. Built once per route from its
 * capabilities, so a switched-off capability's methods are simply absent (-32601).
 */
import type { CapabilitiesConfig } from '../../config/types.ts'
import type { SessionRecord } from '../../store/store.ts'
import type { McpEndpoint } from '../endpoint.ts'
import type { JsonObject } from '../mcp-types.ts'
import type { RequestContext } from '../context.ts'
import { completionMethods } from './completion.ts'
import { loggingMethods } from './logging.ts'
import { promptMethods } from './prompts.ts'
import { resourceMethods, subscriptionMethods } from './resources.ts'
import { toolMethods } from './tools.ts'

export type MethodHandler = (
  endpoint: McpEndpoint,
  record: SessionRecord,
  params: JsonObject,
  ctx: RequestContext,
) => Promise<JsonObject> | JsonObject

export type MethodTable = Record<string, MethodHandler>

const ping: MethodTable = { ping: () => ({}) }

export function methodTable(capabilities: CapabilitiesConfig): Map<string, MethodHandler> {
  const tables: MethodTable[] = [ping]
  if (capabilities.tools !== false) tables.push(toolMethods)
  if (capabilities.prompts !== false) tables.push(promptMethods)
  if (capabilities.resources !== false) {
    tables.push(resourceMethods)
    if (capabilities.resources.subscribe) tables.push(subscriptionMethods)
  }
  if (capabilities.completions) tables.push(completionMethods)
  if (capabilities.logging) tables.push(loggingMethods)
  return new Map(tables.flatMap((table) => Object.entries(table)))
}
