/**
 * A tool call's arguments as the HTTP request its operation describes: the path template filled
 * (each value percent-encoded, so a `/` or `..` in a value stays inside its segment), the query and
 * headers written per each parameter's `style` and `explode`, the body as JSON or a form.
 *
 *   { petId: "../admin", tags: ["a","b"] } ─► /pets/..%2Fadmin?tags=a&tags=b
 *
 * A request this cannot build (a required argument missing, a value that would become a dot
 * segment, a header value with a line break) is refused with a message for the model.
 */
import type { JsonObject } from '../../wire/mcp-types.ts'
import { BODY_ARGUMENT, isJsonType, type OperationTool, type ParameterSpec } from './operations.ts'

/** The parts of one request, relative to the base URL. */
export interface BuiltRequest {
  /** The path (under the base URL's path) and the query, encoded. */
  readonly pathAndQuery: string
  readonly headers: Record<string, string>
  readonly body: string | undefined
}

/** Arguments that cannot make a request; the message is for the model. */
export class ArgumentProblem extends Error {
  override name = 'ArgumentProblem'
}

/** Headers a parameter may not set: the connection's own, and what the gateway sets itself. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'content-type', 'accept', 'proxy-authorization', 'authorization', 'cookie'])

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/

/** A header value: no line breaks or NULs (they would split the request). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\uffff]*$/

/** The request `operation` makes of `args`; throws ArgumentProblem. */
export function buildRequest(operation: OperationTool, args: JsonObject): BuiltRequest {
  let path = operation.path
  const query: string[] = []
  const headers: Record<string, string> = {}
  const cookies: string[] = []
  for (const parameter of operation.parameters) {
    const value = args[parameter.argument]
    if (value === undefined || value === null) {
      if (parameter.required) throw new ArgumentProblem(`missing required argument ${JSON.stringify(parameter.argument)} (${parameter.in} parameter)`)
      continue
    }
    const sent = parameter.json ? JSON.stringify(value) : value
    switch (parameter.in) {
      case 'path':
        path = path.split(`{${parameter.name}}`).join(pathValue(parameter, sent))
        break
      case 'query':
        query.push(...queryPairs(parameter, sent))
        break
      case 'header': {
        const name = parameter.name.toLowerCase()
        if (RESERVED_HEADERS.has(name)) continue
        if (!HEADER_NAME.test(name)) throw new ArgumentProblem(`the document's header parameter ${JSON.stringify(parameter.name)} is not a valid header name`)
        const text = simple(sent, parameter.explode, String)
        if (!HEADER_VALUE.test(text)) throw new ArgumentProblem(`argument ${JSON.stringify(parameter.argument)}: a header value cannot hold line breaks or control characters`)
        headers[name] = text
        break
      }
      case 'cookie':
        cookies.push(`${parameter.name}=${encodeURIComponent(simple(sent, false, String))}`)
        break
    }
  }
  if (/\{[^}]*\}/.test(path)) throw new ArgumentProblem(`the path ${operation.path} has a parameter the document does not declare`)
  for (const segment of path.split('/')) {
    if (/^(\.|%2e){1,2}$/i.test(segment)) throw new ArgumentProblem('a path argument cannot be "." or ".." (it would leave the operation\'s path)')
  }
  if (cookies.length > 0) headers.cookie = cookies.join('; ')
  let body: string | undefined
  const given = args[BODY_ARGUMENT]
  if (operation.body !== undefined && given !== undefined) {
    headers['content-type'] = operation.body.mediaType
    body = isJsonType(operation.body.mediaType) ? JSON.stringify(given) : formBody(given)
  } else if (operation.body?.required === true) {
    throw new ArgumentProblem(`missing required argument "${BODY_ARGUMENT}" (the request body)`)
  }
  return { pathAndQuery: query.length === 0 ? path : `${path}?${query.join('&')}`, headers, body }
}

/** One path parameter's text: `simple` (the default), `label` (`.a.b`) or `matrix` (`;id=a,b`). */
function pathValue(parameter: ParameterSpec, value: unknown): string {
  const encode = encodeURIComponent
  switch (parameter.style) {
    case 'label':
      return `.${simple(value, parameter.explode, encode, parameter.explode ? '.' : ',')}`
    case 'matrix': {
      const name = encode(parameter.name)
      if (Array.isArray(value) && parameter.explode) return value.map((item) => `;${name}=${encode(scalar(item))}`).join('')
      if (isPlainObject(value) && parameter.explode) return Object.entries(value).map(([key, item]) => `;${encode(key)}=${encode(scalar(item))}`).join('')
      return `;${name}=${simple(value, false, encode)}`
    }
    default:
      return simple(value, parameter.explode, encode)
  }
}

/** `simple` style: `a,b,c`; an object `k,v,k2,v2`, exploded `k=v,k2=v2`. */
function simple(value: unknown, explode: boolean, encode: (text: string) => string, separator = ','): string {
  if (Array.isArray(value)) return value.map((item) => encode(scalar(item))).join(separator)
  if (isPlainObject(value)) {
    return Object.entries(value)
      .map(([key, item]) => (explode ? `${encode(key)}=${encode(scalar(item))}` : `${encode(key)},${encode(scalar(item))}`))
      .join(separator)
  }
  return encode(scalar(value))
}

/** One query parameter's `name=value` pairs, per its style (form, spaceDelimited, pipeDelimited, deepObject). */
function queryPairs(parameter: ParameterSpec, value: unknown): string[] {
  const encode = parameter.allowReserved ? encodeReserved : encodeURIComponent
  const name = encodeURIComponent(parameter.name)
  if (parameter.style === 'deepObject' && isPlainObject(value)) {
    return Object.entries(value).map(([key, item]) => `${name}%5B${encodeURIComponent(key)}%5D=${encode(scalar(item))}`)
  }
  if (Array.isArray(value)) {
    if (parameter.explode && parameter.style === 'form') return value.map((item) => `${name}=${encode(scalar(item))}`)
    const separator = parameter.style === 'spaceDelimited' ? '%20' : parameter.style === 'pipeDelimited' ? '%7C' : ','
    return [`${name}=${value.map((item) => encode(scalar(item))).join(separator)}`]
  }
  if (isPlainObject(value)) {
    if (parameter.explode) return Object.entries(value).map(([key, item]) => `${encodeURIComponent(key)}=${encode(scalar(item))}`)
    return [`${name}=${Object.entries(value).map(([key, item]) => `${encode(key)},${encode(scalar(item))}`).join(',')}`]
  }
  return [`${name}=${encode(scalar(value))}`]
}

/** A form body (`application/x-www-form-urlencoded`): nested values as JSON text. */
function formBody(value: unknown): string {
  if (!isPlainObject(value)) throw new ArgumentProblem(`argument "${BODY_ARGUMENT}" must be an object (a form)`)
  const form = new URLSearchParams()
  for (const [key, item] of Object.entries(value)) {
    if (Array.isArray(item)) for (const entry of item) form.append(key, scalar(entry))
    else if (item !== undefined && item !== null) form.append(key, scalar(item))
  }
  return form.toString()
}

/** A scalar as text; an object or array inside a value as JSON. */
function scalar(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (value === null || value === undefined) return ''
  return JSON.stringify(value)
}

/** `allowReserved`: RFC 3986 reserved characters stay as they are, everything else is encoded. */
function encodeReserved(text: string): string {
  return encodeURI(text).replace(/[#&=+]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
