/**
 * What a route's `rewrite:` must satisfy beyond schema.json: no two tools (or prompts) renamed to one
 * name, since a call by that name could reach only one of them.
 */
import type { FoundProblem } from './config-error.ts'
import { isRecord } from './doc-path.ts'

export function rewriteRouteProblems(doc: unknown): FoundProblem[] {
  const routes = isRecord(doc) && Array.isArray(doc.routes) ? doc.routes : []
  const problems: FoundProblem[] = []
  routes.forEach((route: unknown, i) => {
    if (!isRecord(route) || !isRecord(route.rewrite)) return
    for (const kind of ['tools', 'prompts'] as const) {
      const changes = route.rewrite[kind]
      if (!isRecord(changes)) continue
      const targets = new Map<string, string>()
      for (const [from, change] of Object.entries(changes)) {
        if (!isRecord(change) || typeof change.name !== 'string' || change.name === from || change.hidden === true) continue
        const earlier = targets.get(change.name)
        if (earlier !== undefined) problems.push({ path: ['routes', i, 'rewrite', kind, from, 'name'], message: `"${from}" and "${earlier}" are both renamed to "${change.name}"` })
        else targets.set(change.name, from)
      }
    }
  })
  return problems
}
