/**
 * What a proxy route's config must satisfy beyond schema.json: names that cannot collide. Upstream
 * names are unique in their route; with prefixes, no upstream's prefix may start another's (with the
 * separator `-`, `docs` and `docs-v2` would both claim `docs-v2-x`); renamed tools may not land on
 * one name; and `prefix: never` with several upstreams is refused, since their tools could only
 * collide at run time.
 */
import type { FoundProblem } from './config-error.ts'
import { isRecord } from './doc-path.ts'

/** Every naming problem of the document's proxy routes. */
export function proxyRouteProblems(doc: unknown): FoundProblem[] {
  const routes = isRecord(doc) && Array.isArray(doc.routes) ? doc.routes : []
  const problems: FoundProblem[] = []
  routes.forEach((route: unknown, i) => {
    if (!isRecord(route) || !Array.isArray(route.upstreams)) return
    const names = route.upstreams.map((upstream: unknown) => (isRecord(upstream) && typeof upstream.name === 'string' ? upstream.name : undefined))
    const separator = typeof route.separator === 'string' ? route.separator : '__'
    const prefixed = route.prefix === 'always' || (route.prefix !== 'never' && names.length > 1)
    names.forEach((name, n) => {
      if (name === undefined) return
      const earlier = names.indexOf(name)
      if (earlier !== n) {
        problems.push({ path: ['routes', i, 'upstreams', n, 'name'], message: `duplicate upstream name "${name}" (also upstreams[${earlier}])` })
        return
      }
      if (!prefixed) return
      names.forEach((other, m) => {
        if (other === undefined || m === n || other === name) return
        if (`${other}${separator}`.startsWith(`${name}${separator}`)) {
          const message = `upstream "${other}" starts with "${name}${separator}": their prefixed names could collide; rename one or change the separator`
          problems.push({ path: ['routes', i, 'upstreams', m, 'name'], message })
        }
      })
    })
    if (route.prefix === 'never' && names.length > 1) {
      problems.push({ path: ['routes', i, 'prefix'], message: 'prefix "never" needs exactly one upstream: several upstreams could offer the same name' })
    }
    const rename = isRecord(route.tools) && isRecord(route.tools.rename) ? route.tools.rename : {}
    const targets = new Map<string, string>()
    for (const [from, to] of Object.entries(rename)) {
      if (typeof to !== 'string') continue
      const earlier = targets.get(to)
      if (earlier !== undefined) problems.push({ path: ['routes', i, 'tools', 'rename', from], message: `"${from}" and "${earlier}" are both renamed to "${to}"` })
      else targets.set(to, from)
    }
  })
  return problems
}
