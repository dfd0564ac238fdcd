/**
 * Loads a route's phase modules (`phases:`), like its handler: TypeScript through tsx's loader, a
 * reload's generation loads them afresh, and a failure names the file (so `mcp-edge check` does).
 */
import type { Logger } from 'pino'
import type { RouteConfig } from '../config/types.ts'
import { loadDefaultExport } from '../server/load-module.ts'
import { EdgeError } from '../wire/errors.ts'
import { BuiltinFilter } from './builtin-filter.ts'
import { FilterPhase, type FilterModule } from './filter-phase.ts'
import type { LogModule } from './log-phase.ts'
import { RewritePhase, type RewriteModule } from './rewrite-phase.ts'

/** A route's loaded phase modules. */
export interface PhaseModules {
  rewrite?: RewriteModule
  filter?: FilterModule
  log?: LogModule
}

async function loadPhaseFunction(phase: string, file: string, generation: number): Promise<(...args: never[]) => unknown> {
  const exported = await loadDefaultExport(file, `${phase} phase module`, 'MCP_EDGE_PHASE_INVALID', generation)
  if (typeof exported === 'function') return exported as (...args: never[]) => unknown
  const found = exported === undefined ? 'has no default export' : `its default export (${typeof exported}) is not a function`
  throw new EdgeError('MCP_EDGE_PHASE_INVALID', `${file}: ${found}; write \`export default function ${phase}(call) { ... }\``)
}

/** The route's phase modules; throws an EdgeError naming the file of one that fails to load. */
export async function loadPhases(route: RouteConfig, generation = 0): Promise<PhaseModules> {
  const modules: PhaseModules = {}
  if (route.phases.rewrite !== undefined) modules.rewrite = (await loadPhaseFunction('rewrite', route.phases.rewrite, generation)) as RewriteModule
  if (route.phases.filter !== undefined) modules.filter = (await loadPhaseFunction('filter', route.phases.filter, generation)) as FilterModule
  if (route.phases.log !== undefined) modules.log = (await loadPhaseFunction('log', route.phases.log, generation)) as LogModule
  return modules
}

/** The route's filter phase, or undefined when it declares none (its sinks stay unwrapped). */
export function filterPhaseOf(route: RouteConfig, modules: PhaseModules | undefined, logger: Logger): FilterPhase | undefined {
  const builtin = route.filter === undefined ? undefined : new BuiltinFilter(route.filter, route.location)
  if (modules?.filter === undefined && builtin === undefined) return undefined
  return new FilterPhase(route.location, modules?.filter, builtin, logger)
}

/** The route's rewrite phase, or undefined when it declares none (its requests pass untouched). */
export function rewritePhaseOf(route: RouteConfig, modules: PhaseModules | undefined, logger: Logger): RewritePhase | undefined {
  if (modules?.rewrite === undefined && route.rewrite === undefined) return undefined
  try {
    return new RewritePhase(route.location, route.rewrite, modules?.rewrite, route.upstreams.length > 0, logger)
  } catch (error) {
    throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `route ${route.location}: ${(error as Error).message}`)
  }
}
