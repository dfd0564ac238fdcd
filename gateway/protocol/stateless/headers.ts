/**
 * The 2026-07-28 routing headers a stateless request must carry, checked against its body so that
 * intermediaries can route on headers without reading bodies: `Mcp-Method`, `Mcp-Name` (the tool or
 * prompt name, the resource URI) and `Mcp-Param-<Name>` for tool arguments annotated `x-mcp-header`.
 * Values that are not plain ASCII travel as `=?base64?<utf-8 base64>?=`.
 */
import type { JsonObject } from '../../wire/mcp-types.ts'
import { EdgeError } from '../../wire/errors.ts'

type Headers = Record<string, string | string[] | undefined>

const WRAPPED = /^=\?base64\?(.*)\?=$/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function mismatch(message: string): EdgeError {
  return new EdgeError('MCP_EDGE_HEADER_MISMATCH', `Header mismatch: ${message}`)
}

function single(headers: Headers, name: string): string | undefined {
  const value = headers[name]
  return (Array.isArray(value) ? value[0] : value)?.trim()
}

/** A header value as text: the `=?base64?…?=` form decoded strictly, anything else taken literally. */
export function decodeHeaderValue(raw: string, name: string): string {
  const wrapped = WRAPPED.exec(raw)
  if (wrapped === null) return raw
  const encoded = wrapped[1]!
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) throw mismatch(`${name} has a malformed base64 value`)
  return Buffer.from(encoded, 'base64').toString('utf8')
}

/** The name a method's `Mcp-Name` header carries, if it has one. */
function nameOf(method: string, params: JsonObject): unknown {
  if (method === 'tools/call' || method === 'prompts/get') return params.name
  if (method === 'resources/read') return params.uri
  // The tasks extension routes on the task id.
  if (method === 'tasks/get' || method === 'tasks/update' || method === 'tasks/cancel') return params.taskId
  return undefined
}

/** Checks `Mcp-Method` and `Mcp-Name` against the body. */
export function checkRoutingHeaders(headers: Headers, method: string, params: JsonObject): void {
  const headerMethod = single(headers, 'mcp-method')
  if (headerMethod === undefined) throw mismatch('Mcp-Method header is required')
  if (headerMethod !== method) throw mismatch(`Mcp-Method ${headerMethod} differs from the body's method ${method}`)
  const name = nameOf(method, params)
  if (name === undefined) return
  const raw = single(headers, 'mcp-name')
  if (raw === undefined) throw mismatch('Mcp-Name header is required for ' + method)
  if (decodeHeaderValue(raw, 'Mcp-Name') !== name) throw mismatch(`Mcp-Name differs from the body's ${method === 'resources/read' ? 'uri' : method.startsWith('tasks/') ? 'taskId' : 'name'}`)
}

/** The `x-mcp-header` annotations of a tool's input schema: header suffix → argument name. */
export function headerParams(inputSchema: JsonObject): ReadonlyMap<string, string> {
  const found = new Map<string, string>()
  const properties = inputSchema.properties
  if (typeof properties !== 'object' || properties === null) return found
  for (const [argument, schema] of Object.entries(properties as JsonObject)) {
    const header = (schema as JsonObject | null)?.['x-mcp-header']
    if (typeof header === 'string' && header !== '') found.set(header.toLowerCase(), argument)
  }
  return found
}

function asHeaderText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Checks every `Mcp-Param-*` header a tool's annotations call for against the call's arguments. */
export function checkParamHeaders(headers: Headers, annotated: ReadonlyMap<string, string>, args: unknown): void {
  if (annotated.size === 0) return
  const values = typeof args === 'object' && args !== null ? (args as JsonObject) : {}
  for (const [suffix, argument] of annotated) {
    const expected = asHeaderText(values[argument])
    const raw = single(headers, `mcp-param-${suffix}`)
    if (expected === undefined) {
      if (raw !== undefined) throw mismatch(`Mcp-Param-${suffix} is sent but ${argument} is absent`)
      continue
    }
    if (raw === undefined) throw mismatch(`Mcp-Param-${suffix} header is required (argument ${argument})`)
    if (decodeHeaderValue(raw, `Mcp-Param-${suffix}`) !== expected) throw mismatch(`Mcp-Param-${suffix} differs from argument ${argument}`)
  }
}
