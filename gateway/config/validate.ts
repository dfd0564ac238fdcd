/**
 * Checks a config document against `schema.json` (filling in defaults as it goes) and against the
 * rules a schema cannot state, and turns every failure into a problem a person can act on.
 */
import type { ErrorObject } from 'ajv'
import type { FoundProblem } from './config-error.ts'
import { fromPointer, isRecord, type DocPath } from './doc-path.ts'
import { includeProblems } from './include-rules.ts'
import { proxyRouteProblems } from './proxy-rules.ts'
import { rewriteRouteProblems } from './rewrite-check.ts'
// Compiled from schema.json ahead of time (`npm run generate`, validator-code.ts): compiling it at
// start cost more than the rest of loading the config.
import validateSchema from './schema-validator.mjs'

/** What interpolation learned about the document's strings (see `interpolate.ts`). */
export interface ValidateOptions {
  /** Pointers of strings that may be retyped as a number or boolean where the schema asks for one. */
  coercible?: ReadonlySet<string>
  /** Pointers whose value is already reported as broken; schema errors about them would repeat it. */
  skip?: ReadonlySet<string>
}

/**
 * Validates `doc` in place (defaults are written into it) and returns every problem found.
 *
 * Interpolated strings are retyped here rather than with ajv's `coerceTypes`: that option applies
 * to every value, so a YAML `port: ~` would silently become 0 and `version: 1.0` would become "1".
 * Instead a string that was exactly one `${...}` and looks like a number or boolean is retyped only
 * where ajv reported that a number/integer/boolean was expected there, then validation runs again.
 */
export function validateDocument(doc: unknown, options: ValidateOptions = {}): FoundProblem[] {
  if (!validateSchema(doc) && options.coercible?.size && retype(doc, validateSchema.errors ?? [], options.coercible)) validateSchema(doc)
  const errors = (validateSchema.errors ?? []).filter((e) => e.keyword !== 'if' && !isSkipped(e.instancePath, options.skip))
  return [...describeErrors(errors, doc), ...duplicateLocations(doc), ...proxyRouteProblems(doc), ...includeProblems(doc), ...rewriteRouteProblems(doc), ...adminProblems(doc)]
}

function isSkipped(pointer: string, skip: ReadonlySet<string> | undefined): boolean {
  if (!skip) return false
  for (const p of skip) if (pointer === p || pointer.startsWith(p + '/')) return true
  return false
}

/** Retypes coercible strings at `type` errors that want a number or boolean; true if any changed. */
function retype(doc: unknown, errors: readonly ErrorObject[], coercible: ReadonlySet<string>): boolean {
  let changed = false
  for (const e of errors) {
    if (e.keyword !== 'type' || !coercible.has(e.instancePath)) continue
    const wanted = String(e.params.type).split(',')
    const path = fromPointer(e.instancePath, doc)
    const value = valueAt(doc, path)
    if (typeof value !== 'string') continue
    let typed: number | boolean | undefined
    if (/^-?\d+(\.\d+)?$/.test(value) && (wanted.includes('number') || wanted.includes('integer'))) typed = Number(value)
    else if ((value === 'true' || value === 'false') && wanted.includes('boolean')) typed = value === 'true'
    if (typed !== undefined && setValueAt(doc, path, typed)) changed = true
  }
  return changed
}

function valueAt(doc: unknown, path: DocPath): unknown {
  let node = doc
  for (const seg of path) {
    node = Array.isArray(node) || isRecord(node) ? (node as Record<string | number, unknown>)[seg] : undefined
  }
  return node
}

function setValueAt(doc: unknown, path: DocPath, value: unknown): boolean {
  const parent = valueAt(doc, path.slice(0, -1))
  const last = path[path.length - 1]
  if (last === undefined || !(Array.isArray(parent) || isRecord(parent))) return false
  ;(parent as Record<string | number, unknown>)[last] = value
  return true
}

/** Turns ajv errors into problems; the branches of a failed `anyOf` are folded into one message. */
function describeErrors(errors: readonly ErrorObject[], doc: unknown): FoundProblem[] {
  const problems: FoundProblem[] = []
  const folded = new Set<ErrorObject>()
  for (const e of errors) {
    if (e.keyword !== 'anyOf') continue
    const branches = errors.filter((b) => b !== e && b.schemaPath.startsWith(e.schemaPath + '/'))
    for (const b of branches) folded.add(b)
    problems.push(...describeAnyOf(e, branches, doc))
  }
  for (const e of errors) {
    if (e.keyword === 'anyOf' || folded.has(e)) continue
    problems.push(describeError(e, doc))
  }
  return problems
}

/**
 * A value of the kind one branch asks for was meant for that branch, so that branch's errors are
 * the useful ones (`workers: 0` -> "must be >= 1"); failing that, list what each branch accepts.
 */
function describeAnyOf(e: ErrorObject, branches: readonly ErrorObject[], doc: unknown): FoundProblem[] {
  const byBranch = new Map<string, ErrorObject[]>()
  for (const b of branches) {
    const index = b.schemaPath.slice(e.schemaPath.length + 1).split('/')[0] ?? ''
    byBranch.set(index, [...(byBranch.get(index) ?? []), b])
  }
  const isKindError = (b: ErrorObject): boolean => b.instancePath === e.instancePath && KIND_KEYWORDS.has(b.keyword)
  const fitting = [...byBranch.values()].find((errs) => !errs.some(isKindError))
  if (fitting) return describeErrors(fitting, doc)
  const path = fromPointer(e.instancePath, doc)
  const accepted = branches.filter(isKindError).map((b) => expectation(b.keyword, b.params as Record<string, unknown>))
  return [{ path, message: `must be ${accepted.join(' or ')}${found(valueAt(doc, path))}` }]
}

// Keywords that say what kind of value a branch takes, as opposed to limits on that kind.
const KIND_KEYWORDS = new Set(['type', 'const', 'enum'])

function expectation(keyword: string, p: Record<string, unknown>): string {
  if (keyword === 'type') return String(p.type).split(',').map((t) => TYPE_WORDS[t] ?? t).join(' or ')
  if (keyword === 'const') return JSON.stringify(p.allowedValue)
  return `one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
}

const TYPE_WORDS: Record<string, string> = {
  object: 'a mapping', array: 'a list', string: 'a string', number: 'a number', integer: 'an integer',
  boolean: 'true or false', null: 'null',
}

function describeError(e: ErrorObject, doc: unknown): FoundProblem {
  const path = fromPointer(e.instancePath, doc)
  const value = valueAt(doc, path)
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'additionalProperties':
      return { path, at: [...path, String(p.additionalProperty)], message: `unknown key "${String(p.additionalProperty)}"` }
    case 'required':
      return { path, message: `missing required key "${String(p.missingProperty)}"` }
    case 'type': {
      // An unquoted `1.0` loads as the number 1, so "quote it" is the fix, not "change it".
      const hint = String(p.type).includes('string') && typeof value === 'number' ? '; quote it to keep it as text' : ''
      return { path, message: `must be ${expectation('type', p)}${found(value)}${hint}` }
    }
    case 'enum':
    case 'const':
      return { path, message: `must be ${expectation(e.keyword, p)}${found(value)}` }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path, message: `must be ${String(p.comparison)} ${String(p.limit)}${found(value)}` }
    case 'minItems':
      return { path, message: `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}` }
    case 'uniqueItems': {
      const later = Math.max(Number(p.i), Number(p.j))
      const item = Array.isArray(value) ? value[later] : undefined
      return { path: [...path, later], message: `duplicate item ${JSON.stringify(item)}` }
    }
    case 'minLength':
      return { path, message: p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long` }
    case 'pattern':
      return { path, message: `${PATTERN_MESSAGES[String(p.pattern)] ?? `must match /${String(p.pattern)}/`}${found(value)}` }
    case 'format':
      return { path, message: `must be a valid ${String(p.format)}${found(value)}` }
    default:
      return { path, message: e.message ?? `fails "${e.keyword}"` }
  }
}

// Patterns in schema.json, said in words.
const PATTERN_MESSAGES: Record<string, string> = { '^/': 'must start with "/"' }

function found(value: unknown): string {
  if (value === undefined) return ''
  if (value === null) return ' (found null)'
  if (Array.isArray(value)) return ' (found a list)'
  if (typeof value === 'object') return ' (found a mapping)'
  const shown = JSON.stringify(value)
  return ` (found ${typeof value} ${shown.length > 60 ? shown.slice(0, 57) + '...' : shown})`
}

/** Route locations must be unique, and not the gateway's own paths; the schema cannot say "unique by one property". */
function duplicateLocations(doc: unknown): FoundProblem[] {
  const routes = isRecord(doc) && Array.isArray(doc.routes) ? doc.routes : []
  const first = new Map<string, number>()
  const problems: FoundProblem[] = []
  // The gateway's own paths are taken too.
  const metrics = isRecord(doc) && isRecord(doc.metrics) ? doc.metrics : {}
  const reserved = new Set(['/healthz', '/readyz'])
  if (metrics.enabled !== false) reserved.add(typeof metrics.path === 'string' ? metrics.path : '/metrics')
  routes.forEach((route: unknown, i) => {
    if (!isRecord(route) || typeof route.location !== 'string') return
    if (reserved.has(route.location)) {
      problems.push({ path: ['routes', i, 'location'], message: `location "${route.location}" is the gateway's own (${[...reserved].join(', ')}); pick another, or move metrics.path` })
      return
    }
    const earlier = first.get(route.location)
    if (earlier === undefined) first.set(route.location, i)
    else {
      const message = `duplicate location "${route.location}" (also routes[${earlier}])`
      problems.push({ path: ['routes', i, 'location'], message })
    }
  })
  return problems
}

/** An admin listener beyond loopback must ask for a credential: the schema cannot tell loopback from the rest. */
function adminProblems(doc: unknown): FoundProblem[] {
  const admin = isRecord(doc) && isRecord(doc.admin) ? doc.admin : undefined
  if (admin === undefined || typeof admin.listen !== 'string') return []
  const cut = admin.listen.lastIndexOf(':')
  const host = admin.listen.slice(0, cut).replace(/^\[(.*)\]$/, '$1')
  const port = Number(admin.listen.slice(cut + 1))
  const problems: FoundProblem[] = []
  if (!(port >= 0 && port <= 65535)) problems.push({ path: ['admin', 'listen'], message: `port ${admin.listen.slice(cut + 1)} is not a port (0 to 65535)` })
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host)
  if (!loopback && admin.token === undefined && admin.jwt === undefined) {
    problems.push({ path: ['admin', 'listen'], message: `the admin listener on ${host} is reachable beyond this host: set admin.token or admin.jwt` })
  }
  return problems
}
