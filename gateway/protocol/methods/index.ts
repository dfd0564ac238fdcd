/**
 * The method table of a route: JSON-RPC method name → handler. Built once per route from its
 * capabilities, so a switched-off capability's methods are simply absent (-32601).
 */
import type { CapabilitiesConfig } from '../../config/types.ts'
import { completionMethods } from './completion.ts'
import { loggingMethods } from './logging.ts'
import type { MethodHandler, MethodTable } from './method-handler.ts'
import { promptMethods } from './prompts.ts'
import { resourceMethods, subscriptionMethods } from './resources.ts'
import { taskMethods } from './tasks.ts'
import { toolMethods } from './tools.ts'

export type { MethodHandler, MethodHost, MethodTable } from './method-handler.ts'

const ping: MethodTable = { ping: () => ({}) }

/** The methods a route with `capabilities` (and `tasks.enabled`) serves. */
export function methodTable(capabilities: CapabilitiesConfig, tasks = false): Map<string, MethodHandler> {
  const tables: MethodTable[] = [ping]
  if (capabilities.tools !== false) tables.push(toolMethods)
  if (capabilities.tools !== false && tasks) tables.push(taskMethods)
  if (capabilities.prompts !== false) tables.push(promptMethods)
  if (capabilities.resources !== false) {
    tables.push(resourceMethods)
    if (capabilities.resources.subscribe) tables.push(subscriptionMethods)
  }
  if (capabilities.completions) tables.push(completionMethods)
  if (capabilities.logging) tables.push(loggingMethods)
  return new Map(tables.flatMap((table) => Object.entries(table)))
}
