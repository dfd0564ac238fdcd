/**
 * Compiles tool input and output schemas with ajv, once per schema at registration, and turns ajv's
 * errors into one readable line. MCP's default dialect is JSON Schema 2020-12; schemas that declare
 * draft-07 get ajv's draft-07 build. No schema is ever fetched: an unresolvable `$ref` fails to compile.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import type { JsonObject } from '../wire/mcp-types.ts'

export type { ValidateFunction } from 'ajv'

const OPTIONS: Options = {
  // Handler schemas carry vendor keywords (`x-mcp-header`, …) that must not fail registration.
  strict: false,
  // Not adding schemas by `$id` lets two tools (or a replaced tool) share an `$id` without a clash.
  addUsedSchema: false,
  allErrors: false,
}

const DIALECT_2020 = new Set(['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#'])
const DIALECT_07 = new Set(['http://json-schema.org/draft-07/schema', 'http://json-schema.org/draft-07/schema#'])

// ajv-formats is CommonJS with `exports.default`; under NodeNext its default import is the module object.
const addFormats = formats.default

// ajv keeps every function it compiled, and its schema, in the instance's scope for the instance's
// whole life (removeSchema does not release them), so one long-lived instance grows with every
// re-registration. Each instance compiles at most this many schemas; a retired instance is freed
// together with the last validator it made.
const COMPILATIONS_PER_INSTANCE = 500

class Compiler {
  readonly #make: () => Ajv | Ajv2020
  #ajv: Ajv | Ajv2020 | undefined
  #count = 0

  constructor(make: () => Ajv | Ajv2020) {
    this.#make = make
  }

  compile(schema: JsonObject): ValidateFunction {
    if (this.#ajv === undefined || this.#count >= COMPILATIONS_PER_INSTANCE) {
      this.#ajv = this.#make()
      addFormats(this.#ajv)
      this.#count = 0
    }
    this.#count++
    return this.#ajv.compile(schema)
  }
}

const compiler2020 = new Compiler(() => new Ajv2020(OPTIONS))
const compiler07 = new Compiler(() => new Ajv(OPTIONS))

function compilerFor(schema: JsonObject): Compiler {
  const dialect = schema.$schema
  if (dialect === undefined || DIALECT_2020.has(dialect as string)) return compiler2020
  if (DIALECT_07.has(dialect as string)) return compiler07
  throw new Error(`unsupported $schema ${JSON.stringify(dialect)} (use JSON Schema 2020-12 or draft-07)`)
}

/** Compiles an object schema (`type: "object"`); throws an Error saying why when it is not one or does not compile. */
export function compileObjectSchema(schema: unknown): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('must be a JSON Schema object')
  const object = schema as JsonObject
  if (object.type !== 'object') throw new Error('must be an object schema (type: "object")')
  const compiler = compilerFor(object)
  try {
    return compiler.compile(object)
  } catch (err) {
    throw new Error(`does not compile: ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** One line naming the failing field, e.g. `/message must be string` or `must have required property 'message'`. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'does not match the schema'
  let text = ''
  for (const error of errors) {
    if (text !== '') text += '; '
    if (error.instancePath !== '') text += `${error.instancePath} `
    text += error.message ?? 'is invalid'
    const extra = (error.params as { additionalProperty?: unknown }).additionalProperty
    if (typeof extra === 'string') text += ` ('${extra}')`
  }
  return text
}
