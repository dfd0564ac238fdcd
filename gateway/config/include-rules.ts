/**
 * What a virtual route's `include` must satisfy beyond schema.json: every source names a route of
 * this config, and an upstream of that route; a route does not include itself nor another virtual
 * route (a chain would be resolved in some order, and a loop never); and a virtual route has no
 * upstreams of its own.
 */
import type { FoundProblem } from './config-error.ts'
import { isRecord } from './doc-path.ts'

/** Every problem of the document's `include` lists. */
export function includeProblems(doc: unknown): FoundProblem[] {
  const routes = isRecord(doc) && Array.isArray(doc.routes) ? doc.routes.filter(isRecord) : []
  const byLocation = new Map<string, Record<string, unknown>>()
  for (const route of routes) if (typeof route.location === 'string' && !byLocation.has(route.location)) byLocation.set(route.location, route)
  const problems: FoundProblem[] = []
  const all = isRecord(doc) && Array.isArray(doc.routes) ? doc.routes : []
  all.forEach((route: unknown, i) => {
    if (!isRecord(route) || !Array.isArray(route.include)) return
    if (Array.isArray(route.upstreams)) {
      problems.push({ path: ['routes', i, 'include'], message: 'a route with include has no upstreams of its own: include them from a proxy route instead' })
    }
    route.include.forEach((source: unknown, n) => {
      if (!isRecord(source) || typeof source.route !== 'string') return
      const at = ['routes', i, 'include', n, 'route']
      const from = byLocation.get(source.route)
      if (from === undefined) {
        const known = [...byLocation.keys()].filter((location) => location !== route.location)
        problems.push({ path: at, message: `include names route "${source.route}", which this config does not have${known.length > 0 ? ` (routes: ${known.join(', ')})` : ''}` })
        return
      }
      if (source.route === route.location) {
        problems.push({ path: at, message: 'a route cannot include itself' })
        return
      }
      if (Array.isArray(from.include)) {
        problems.push({ path: at, message: `route "${source.route}" is itself a virtual route (it has include): include its sources directly` })
        return
      }
      if (typeof source.upstream === 'string') {
        const names = Array.isArray(from.upstreams) ? from.upstreams.map((upstream: unknown) => (isRecord(upstream) ? upstream.name : undefined)) : []
        if (!names.includes(source.upstream)) {
          const listed = names.filter((name): name is string => typeof name === 'string')
          problems.push({ path: ['routes', i, 'include', n, 'upstream'], message: `route "${source.route}" has no upstream "${source.upstream}"${listed.length > 0 ? ` (its upstreams: ${listed.join(', ')})` : ' (it has no upstreams)'}` })
        }
      } else if (typeof from.handler !== 'string') {
        problems.push({ path: at, message: `route "${source.route}" has no handler whose tools could be included: name one of its upstreams with upstream:` })
      }
    })
  })
  return problems
}
