/**
 * What the approval gate (phases/approval-gate.ts) knows of a proxy route's tool: a local tool by the
 * route's registry, an upstream's by the annotations that upstream lists (`destructiveHint`), learnt
 * by listing once on a worker that has not listed it yet.
 */
import { registryHint, type ToolLookup } from '../phases/approval-gate.ts'
import { listedTool } from './proxy-methods.ts'
import type { ProxyRoute } from './proxy-route.ts'

/** The tool lookup of `proxy`'s route. */
export function proxyToolLookup(proxy: ProxyRoute): ToolLookup {
  return (host, record, name, params, ctx) => {
    const local = registryHint(host, record, name)
    if (local !== 'unknown') return local
    const known = proxy.toolIndex.get(name)
    if (known !== undefined) return known.destructive === true ? 'destructive' : 'other'
    return listedTool(proxy, record, name, params, ctx.caller).then((listed) => (listed === undefined ? 'unknown' : listed.destructive === true ? 'destructive' : 'other'))
  }
}
