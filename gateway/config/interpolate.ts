/**
 * `${VAR}` and `${VAR:-default}` in config strings, filled from the environment. A default is plain
 * text: `${A:-${B}}` is an error naming A.
 *
 * This runs on the parsed document, not on the YAML text: a value can then never break the YAML
 * syntax (a `:` or `#` in a secret stays part of the string), and keys are never rewritten. The
 * price is that every result is a string; `coercible` lists the values that were exactly one
 * `${...}` so the validator may retype them where the schema wants a number or a boolean.
 */
import type { FoundProblem } from './config-error.ts'
import { isRecord, toPointer } from './doc-path.ts'

/** The environment to read variables from (`process.env` has this shape). */
export type Env = Readonly<Record<string, string | undefined>>

/** The interpolated copy of a document and what happened on the way. */
export interface Interpolated {
  /** A deep copy of the input with every string interpolated; the input is left untouched. */
  doc: unknown
  problems: FoundProblem[]
  /** Pointers of strings that were exactly one `${...}` expression. */
  coercible: Set<string>
  /** Pointers of strings that could not be interpolated; they keep their text as written. */
  failed: Set<string>
}

// `$${` is an escaped `${`; otherwise `${` opens a reference that runs to the next `}`.
const REFERENCE = /\$\$\{|\$\{([^}]*)(\}?)/g
const BODY = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([^]*))?$/
const WHOLE = /^\$\{[^}]*\}$/

/** Interpolates every string value in `doc` (keys excluded) from `env`. */
export function interpolateEnv(doc: unknown, env: Env): Interpolated {
  const out: Interpolated = { doc: undefined, problems: [], coercible: new Set(), failed: new Set() }
  out.doc = walk(doc, [], env, out)
  return out
}

function walk(node: unknown, path: Array<string | number>, env: Env, out: Interpolated): unknown {
  if (typeof node === 'string') return interpolateString(node, path, env, out)
  if (Array.isArray(node)) return node.map((item, i) => walk(item, [...path, i], env, out))
  // fromEntries defines own properties, so a `__proto__` key stays a key and touches no prototype.
  if (isRecord(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, [...path, k], env, out)]))
  return node
}

function interpolateString(text: string, path: Array<string | number>, env: Env, out: Interpolated): string {
  if (!text.includes('${')) return text
  const problems: string[] = []
  const result = text.replace(REFERENCE, (match: string, body: string | undefined, close: string | undefined) => {
    if (match === '$${') return '${'
    if (close === '') {
      problems.push(`unterminated "\${" in "${text}" (write "$\${" for a literal "\${")`)
      return match
    }
    const parts = BODY.exec(body ?? '')
    const name = parts?.[1]
    if (parts === null || name === undefined) {
      problems.push(`bad variable reference "${match}": expected \${NAME} or \${NAME:-default}`)
      return match
    }
    const value = env[name]
    const fallback = parts[2]
    // `${A:-${B}}` would end at the first `}`: refused by name rather than read as a wrong default.
    if (fallback?.includes('${')) {
      problems.push(`nested reference in the default of \${${name}:-…}: a default cannot hold \${…}; set ${name}, or write its default out`)
      return match
    }
    // As in the shell, `:-` also covers a variable that is set but empty.
    if (fallback !== undefined && (value === undefined || value === '')) return fallback
    if (value === undefined) {
      problems.push(`environment variable ${name} is not set and has no default (write \${${name}:-default} to give one)`)
      return match
    }
    return value
  })
  const pointer = toPointer(path)
  if (problems.length > 0) {
    out.failed.add(pointer)
    for (const message of problems) out.problems.push({ path, message })
    return text
  }
  if (WHOLE.test(text)) out.coercible.add(pointer)
  return result
}
