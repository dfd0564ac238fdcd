/**
 * RFC 6570 URI templates for resource templates: a strict syntax check at registration (the
 * `uri-templates` package accepts almost anything), and matching a URI back to its variables.
 *
 * `uri-templates`' `fromUri` guesses generously (`{id}` happily swallows `a/b`), so a match is only
 * accepted when the variables expand back to exactly the URI that was asked for.
 */
import uriTemplates from 'uri-templates'

/** The variables of a matched URI: a string per variable, a list for exploded or comma-separated values. */
export type TemplateVariables = Record<string, string | string[]>

// RFC 6570 §2.3: varchar = ALPHA / DIGIT / "_" / pct-encoded; dots only between varchars.
const VARCHAR = '(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})'
const VARSPEC = new RegExp(`^${VARCHAR}(?:\\.?${VARCHAR})*(?::[1-9][0-9]{0,3}|\\*)?$`)
const OPERATORS = '+#./;?&'
// §2.2: "=,!@|" are reserved for future operator extensions; a template using them is not portable.
const RESERVED_OPERATORS = '=,!@|'
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/

/** A parsed, validated URI template. */
export class UriTemplate {
  readonly template: string
  readonly variableNames: readonly string[]
  /** The literal text before the first expression: a cheap filter before the real match. */
  readonly prefix: string
  readonly #compiled: ReturnType<typeof uriTemplates>

  /** Throws an Error saying what is wrong when `template` is not valid RFC 6570. */
  constructor(template: string) {
    const problem = checkSyntax(template)
    if (problem !== undefined) throw new Error(`invalid URI template ${JSON.stringify(template)}: ${problem}`)
    this.template = template
    this.#compiled = uriTemplates(template)
    this.variableNames = [...new Set(this.#compiled.varNames)]
    const brace = template.indexOf('{')
    this.prefix = brace === -1 ? template : template.slice(0, brace)
  }

  /** The variables that make this template expand to exactly `uri`, or undefined when it does not match. */
  match(uri: string): TemplateVariables | undefined {
    if (!uri.startsWith(this.prefix)) return undefined
    const found = this.#compiled.fromUri(uri, { strict: true })
    if (found === undefined) return undefined
    for (const name in found) {
      const value = found[name]
      // Key=value explosions (`{?params*}`) are not representable in TemplateVariables; an empty value
      // is not a match either (`test://t//data` is not an instance of `test://t/{id}/data`).
      if (typeof value === 'string' ? value === '' : !Array.isArray(value)) return undefined
    }
    return this.#compiled.fill(found) === uri ? (found as TemplateVariables) : undefined
  }

  /** Expands the template with `variables` (missing ones expand to nothing, as RFC 6570 says). */
  expand(variables: TemplateVariables): string {
    return this.#compiled.fill(variables)
  }

  toString(): string {
    return this.template
  }
}

/** What is wrong with `template` as an RFC 6570 template whose expansion is an absolute URI, or undefined. */
function checkSyntax(template: string): string | undefined {
  if (template.length === 0) return 'it is empty'
  let i = 0
  while (i < template.length) {
    const ch = template[i] as string
    if (ch === '{') {
      const end = template.indexOf('}', i + 1)
      if (end === -1) return `unclosed "{" at ${i}`
      const problem = checkExpression(template.slice(i + 1, end))
      if (problem !== undefined) return `${problem} in "${template.slice(i, end + 1)}"`
      i = end + 1
      continue
    }
    if (ch === '}') return `unmatched "}" at ${i}`
    if (ch === '%') {
      if (!/^%[0-9A-Fa-f]{2}/.test(template.slice(i, i + 3))) return `bad percent-encoding at ${i}`
      i += 3
      continue
    }
    if (!isLiteral(ch.charCodeAt(0))) return `character ${JSON.stringify(ch)} is not allowed at ${i}`
    i++
  }
  // A template whose literal start is not a scheme cannot expand to an absolute URI.
  if (!SCHEME.test(template)) return 'it does not start with a URI scheme (e.g. "file:")'
  return undefined
}

function checkExpression(body: string): string | undefined {
  if (body.length === 0) return 'empty expression'
  if (body.includes('{')) return 'nested "{"'
  let list = body
  const first = body[0] as string
  if (RESERVED_OPERATORS.includes(first)) return `reserved operator "${first}"`
  if (OPERATORS.includes(first)) list = body.slice(1)
  for (const spec of list.split(',')) {
    if (!VARSPEC.test(spec)) return `bad variable ${JSON.stringify(spec)}`
  }
  return undefined
}

// RFC 6570 §2.1 literals: printable ASCII except space " ' % < > \ ^ ` { | }, plus any non-ASCII.
function isLiteral(code: number): boolean {
  if (code > 0x7e) return code >= 0xa0
  if (code <= 0x20) return false
  return !'"\'<>\\^`{|}'.includes(String.fromCharCode(code))
}
