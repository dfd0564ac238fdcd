/**
 * OpenAPI schemas as the JSON Schema (2020-12) a tool declares: internal `$ref`s inlined, the 3.0
 * dialect's own keywords translated (`nullable`, boolean `exclusiveMinimum`, `example`), keywords no
 * JSON Schema validator knows dropped (`discriminator`, `xml`, `x-*`).
 *
 *   { $ref: '#/components/schemas/Pet' } ─► resolve ─► on the stack already? ─► more than `recursionDepth` times:
 *                                                          refused (SchemaProblem), or cut to {} when unrolling is allowed
 *
 * Every walk is bounded: nesting depth, nodes per schema, `$ref` hops. A document's schemas are
 * converted once per load, never per call.
 */
import type { JsonObject } from '../../wire/mcp-types.ts'

/** Nesting deeper than this is refused: no real API needs it, and a generated one can. */
const MAX_DEPTH = 64
/** Nodes in one tool's schema: a DAG of shared schemas can grow exponentially once inlined. */
const MAX_NODES = 20_000
/** `$ref` to `$ref` to … hops followed for one node. */
const MAX_HOPS = 32

/** A schema that cannot become a tool's: recursive, too deep or large, an unresolvable `$ref`. */
export class SchemaProblem extends Error {
  override name = 'SchemaProblem'
}

/** Keywords whose value is one subschema. */
const ONE = new Set(['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else', 'unevaluatedProperties', 'unevaluatedItems', 'additionalItems', 'contentSchema'])
/** Keywords whose value is a list of subschemas. */
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])
/** Keywords whose value maps names to subschemas. */
const MAP = new Set(['properties', 'patternProperties', 'dependentSchemas'])
/** OpenAPI's own keywords, meaningless to a JSON Schema validator. */
const DROPPED = new Set(['discriminator', 'xml', 'externalDocs', 'example', 'nullable', '$schema', '$id', '$defs', 'definitions', '$anchor', '$dynamicAnchor', '$dynamicRef', '$comment'])

/** What one conversion walks against: the whole (bundled) document, for `$ref`s, and its bounds. */
export class SchemaConverter {
  readonly #root: JsonObject
  readonly #recursionDepth: number
  readonly #openapi30: boolean
  #nodes = 0

  /** `recursionDepth`: times a schema may appear inside itself before it is cut; 0 refuses recursion. */
  constructor(root: JsonObject, recursionDepth: number) {
    this.#root = root
    this.#recursionDepth = recursionDepth
    this.#openapi30 = typeof root.openapi === 'string' && root.openapi.startsWith('3.0')
  }

  /** `schema` as JSON Schema; throws SchemaProblem. `where` names it in the message. */
  convert(schema: unknown, where: string): unknown {
    this.#nodes = 0
    return this.#walk(schema, [], 0, where)
  }

  /** The object a `$ref` chain leads to (parameters, request bodies, responses are referenced too). */
  deref(node: unknown, where: string): JsonObject | undefined {
    let current = node
    for (let hops = 0; hops < MAX_HOPS; hops++) {
      if (!isObject(current)) return undefined
      const ref = current.$ref
      if (typeof ref !== 'string') return current
      current = this.#pointer(ref, where)
    }
    throw new SchemaProblem(`${where}: more than ${MAX_HOPS} $ref hops`)
  }

  #walk(node: unknown, stack: string[], depth: number, where: string): unknown {
    if (typeof node === 'boolean') return node
    if (!isObject(node)) throw new SchemaProblem(`${where}: a schema must be an object or a boolean`)
    if (++this.#nodes > MAX_NODES) throw new SchemaProblem(`${where}: the schema is larger than ${MAX_NODES} nodes once its $refs are inlined`)
    if (depth > MAX_DEPTH) throw new SchemaProblem(`${where}: the schema nests deeper than ${MAX_DEPTH} levels`)
    const ref = node.$ref
    if (typeof ref === 'string') {
      const seen = stack.filter((entry) => entry === ref).length
      if (seen > 0 && (this.#recursionDepth === 0 || seen > this.#recursionDepth)) {
        if (this.#recursionDepth === 0) {
          const cycle = [...stack.slice(stack.indexOf(ref)), ref].map(refName).join(' → ')
          throw new SchemaProblem(`${where}: recursive schema (${cycle}); set openapi.recursion_depth to unroll it a few levels, or leave this operation out`)
        }
        return { description: `(${refName(ref)}: recursive, cut here)` }
      }
      const target = this.#pointer(ref, where)
      const { $ref: _ref, ...siblings } = node
      void _ref
      const converted = this.#walk(target, [...stack, ref], depth + 1, where)
      // 3.1 allows keywords beside a $ref (a description, mostly): they narrow the target.
      const extra = this.#walk(siblings, stack, depth + 1, where) as JsonObject
      return Object.keys(extra).length === 0 || !isObject(converted) ? converted : { ...converted, ...extra }
    }
    const out: JsonObject = {}
    for (const [key, value] of Object.entries(node)) {
      if (DROPPED.has(key) || key.startsWith('x-')) continue
      if (ONE.has(key)) out[key] = this.#walk(value, stack, depth + 1, where)
      else if (LIST.has(key) || (key === 'items' && Array.isArray(value))) {
        if (!Array.isArray(value)) throw new SchemaProblem(`${where}: ${key} must be a list of schemas`)
        out[key] = value.map((entry) => this.#walk(entry, stack, depth + 1, where))
      } else if (MAP.has(key)) {
        if (!isObject(value)) throw new SchemaProblem(`${where}: ${key} must be an object`)
        const mapped: JsonObject = {}
        for (const [name, sub] of Object.entries(value)) mapped[name] = this.#walk(sub, stack, depth + 1, where)
        out[key] = mapped
      } else out[key] = value
    }
    if (this.#openapi30) translate30(node, out)
    return out
  }

  #pointer(ref: string, where: string): unknown {
    if (!ref.startsWith('#')) throw new SchemaProblem(`${where}: $ref ${JSON.stringify(ref)} points outside the document`)
    let current: unknown = this.#root
    for (const raw of ref.slice(1).split('/').slice(1)) {
      const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
      if (!isObject(current) && !Array.isArray(current)) current = undefined
      current = current === undefined ? undefined : (current as Record<string, unknown>)[token]
      if (current === undefined) throw new SchemaProblem(`${where}: $ref ${JSON.stringify(ref)} points at nothing`)
    }
    return current
  }
}

/** OpenAPI 3.0's variants of JSON Schema keywords, as 2020-12 writes them. */
function translate30(source: JsonObject, out: JsonObject): void {
  if (source.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null']
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
  }
  if (source.example !== undefined && out.examples === undefined) out.examples = [source.example]
  if (source.exclusiveMinimum === true && typeof source.minimum === 'number') {
    out.exclusiveMinimum = source.minimum
    delete out.minimum
  } else if (typeof source.exclusiveMinimum === 'boolean') delete out.exclusiveMinimum
  if (source.exclusiveMaximum === true && typeof source.maximum === 'number') {
    out.exclusiveMaximum = source.maximum
    delete out.maximum
  } else if (typeof source.exclusiveMaximum === 'boolean') delete out.exclusiveMaximum
}

/** `#/components/schemas/Pet` → `Pet`. */
function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1)
}

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
