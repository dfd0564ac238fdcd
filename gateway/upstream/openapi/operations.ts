/**
 * The operations of a document that the config selects, each as a tool: its name (the operationId,
 * sanitised), description, input schema (path, query, header and cookie parameters; the JSON or form
 * body under `body`), output schema (the 2xx JSON response, when an object) and hints, plus what a
 * call needs to build its request. Built once per document load.
 *
 *   paths × methods ─► selected? (operations | tags | paths globs, then methods) ─► operationId? ─► tool
 *                                                                                  every problem collected, none thrown
 */
import type { OpenApiUpstreamConfig } from '../../config/types.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import { isObject, SchemaConverter, SchemaProblem } from './schema-convert.ts'

/** The methods a path item may hold, in the order tools are listed. */
export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

/** Where a parameter goes and how its value is written (OpenAPI's `style` and `explode`). */
export interface ParameterSpec {
  /** Its name in the request. */
  readonly name: string
  /** Its name among the tool's arguments (the same unless two locations share a name). */
  readonly argument: string
  readonly in: 'path' | 'query' | 'header' | 'cookie'
  readonly style: string
  readonly explode: boolean
  readonly required: boolean
  readonly allowReserved: boolean
  /** Sent as JSON text (a parameter described by `content` rather than `schema`). */
  readonly json: boolean
}

/** The request body: its media type, and whether it must be given. */
export interface BodySpec {
  readonly mediaType: string
  readonly required: boolean
}

/** One operation as a tool and as a request to build. */
export interface OperationTool {
  /** The upstream tool name: the operationId, sanitised. */
  readonly name: string
  readonly operationId: string
  /** Upper case. */
  readonly method: string
  /** The path template as the document writes it. */
  readonly path: string
  readonly parameters: readonly ParameterSpec[]
  readonly body: BodySpec | undefined
  /** What tools/list shows. */
  readonly tool: JsonObject
}

/** A request body of a media type this gateway does not send (multipart, binary). */
class UnsupportedBody extends Error {
  override name = 'UnsupportedBody'
}

/** The argument that carries the request body. */
export const BODY_ARGUMENT = 'body'

/** Longest description kept (summary and description together). */
const MAX_DESCRIPTION = 4096

/** The selected operations as tools, and every problem that keeps one from being exposed. */
export function selectOperations(document: JsonObject, config: OpenApiUpstreamConfig): { tools: OperationTool[]; problems: string[]; skipped: string[] } {
  const skipped: string[] = []
  const converter = new SchemaConverter(document, config.recursion_depth)
  const tools: OperationTool[] = []
  const problems: string[] = []
  const byName = new Map<string, string>()
  const ids = config.operations.map(glob)
  const paths = config.paths.map(glob)
  const tags = new Set(config.tags)
  const methods = config.methods === undefined ? undefined : new Set(config.methods.map((method) => method.toUpperCase()))
  for (const [path, rawItem] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    const item = converter.deref(rawItem, path)
    if (item === undefined) continue
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation)) continue
      const upper = method.toUpperCase()
      const id = typeof operation.operationId === 'string' ? operation.operationId : undefined
      const operationTags = Array.isArray(operation.tags) ? operation.tags.filter((tag): tag is string => typeof tag === 'string') : []
      const selected = (ids.some((pattern) => (id === undefined ? pattern.source === '^.*$' : pattern.test(id)))
        || paths.some((pattern) => pattern.test(path))
        || operationTags.some((tag) => tags.has(tag)))
        && (methods === undefined || methods.has(upper))
      if (!selected) continue
      const where = `${upper} ${path}`
      if (id === undefined || id === '') {
        problems.push(`${where} has no operationId: give it one in the document, or leave it out of operations, tags and paths`)
        continue
      }
      try {
        const tool = operationTool(converter, path, upper, id, item, operation)
        const earlier = byName.get(tool.name)
        if (earlier !== undefined) {
          problems.push(`operationId ${JSON.stringify(id)} (${where}) becomes the tool name ${tool.name}, as ${earlier} does: rename one of them`)
          continue
        }
        byName.set(tool.name, `${JSON.stringify(id)} (${where})`)
        tools.push(tool)
      } catch (error) {
        if (!(error instanceof UnsupportedBody || error instanceof SchemaProblem)) throw error
        // A body this gateway cannot send, on an operation only a pattern selected: left out, and said so.
        if (error instanceof UnsupportedBody && !config.operations.includes(id)) skipped.push(`${id} (${where}): ${error.message}`)
        else problems.push(`operation ${JSON.stringify(id)} (${where}): ${error.message}`)
      }
    }
  }
  for (const [index, pattern] of config.operations.entries()) {
    if (!/[*?]/.test(pattern) && !tools.some((tool) => tool.operationId === pattern) && !problems.some((problem) => problem.includes(JSON.stringify(pattern)))) {
      problems.push(`operations[${index}]: the document has no operation ${JSON.stringify(pattern)}${methods === undefined ? '' : ' of the methods listed'}`)
    }
  }
  return { tools, problems, skipped }
}

/** `getPet.v2` → `getPet_v2`: the characters a tool name may hold. */
export function toolName(operationId: string): string {
  return operationId.replace(/[^A-Za-z0-9_-]/g, '_')
}

function operationTool(converter: SchemaConverter, path: string, method: string, id: string, item: JsonObject, operation: JsonObject): OperationTool {
  const where = `${method} ${path}`
  // Path-level parameters apply unless the operation redefines the same (name, in).
  const declared = new Map<string, JsonObject>()
  for (const list of [item.parameters, operation.parameters]) {
    if (!Array.isArray(list)) continue
    for (const raw of list) {
      const parameter = converter.deref(raw, where)
      if (parameter === undefined || typeof parameter.name !== 'string' || typeof parameter.in !== 'string') continue
      declared.set(`${parameter.in}\0${parameter.name}`, parameter)
    }
  }
  const counts = new Map<string, number>()
  for (const parameter of declared.values()) counts.set(parameter.name as string, (counts.get(parameter.name as string) ?? 0) + 1)
  const properties: JsonObject = {}
  const required: string[] = []
  const parameters: ParameterSpec[] = []
  for (const parameter of declared.values()) {
    const name = parameter.name as string
    const location = parameter.in as string
    if (location !== 'path' && location !== 'query' && location !== 'header' && location !== 'cookie') continue
    const argument = counts.get(name)! > 1 || name === BODY_ARGUMENT ? `${location}_${name}` : name
    let schema: unknown = parameter.schema
    let json = false
    if (schema === undefined && isObject(parameter.content)) {
      const first = Object.values(parameter.content)[0]
      schema = isObject(first) ? first.schema : undefined
      json = true
    }
    const converted = schema === undefined ? {} : converter.convert(schema, `${where} parameter ${name}`)
    const property: JsonObject = typeof converted === 'boolean' ? {} : { ...(converted as JsonObject) }
    if (typeof parameter.description === 'string' && property.description === undefined) property.description = parameter.description
    if (parameter.deprecated === true) property.deprecated = true
    properties[argument] = property
    const isRequired = location === 'path' || parameter.required === true
    if (isRequired) required.push(argument)
    const style = typeof parameter.style === 'string' ? parameter.style : location === 'query' || location === 'cookie' ? 'form' : 'simple'
    parameters.push({
      name,
      argument,
      in: location,
      style,
      explode: typeof parameter.explode === 'boolean' ? parameter.explode : style === 'form',
      required: isRequired,
      allowReserved: parameter.allowReserved === true,
      json,
    })
  }
  let body: BodySpec | undefined
  const requestBody = converter.deref(operation.requestBody, where)
  if (requestBody !== undefined && isObject(requestBody.content)) {
    const mediaType = Object.keys(requestBody.content).find(isJsonType) ?? Object.keys(requestBody.content).find((type) => type === 'application/x-www-form-urlencoded')
    if (mediaType === undefined) {
      throw new UnsupportedBody(`its request body is ${Object.keys(requestBody.content).join(', ')}: only JSON and application/x-www-form-urlencoded bodies are supported`)
    }
    const media = requestBody.content[mediaType]
    const converted = isObject(media) && media.schema !== undefined ? converter.convert(media.schema, `${where} request body`) : {}
    const property: JsonObject = typeof converted === 'boolean' ? {} : { ...(converted as JsonObject) }
    if (typeof requestBody.description === 'string' && property.description === undefined) property.description = requestBody.description
    properties[BODY_ARGUMENT] = property
    body = { mediaType, required: requestBody.required === true }
    if (body.required) required.push(BODY_ARGUMENT)
  }
  const inputSchema: JsonObject = { type: 'object', properties }
  if (required.length > 0) inputSchema.required = required
  const tool: JsonObject = { name: toolName(id), description: describe(operation, where), inputSchema }
  if (typeof operation.summary === 'string' && operation.summary !== '') tool.title = operation.summary
  const outputSchema = successSchema(converter, operation, where)
  if (outputSchema !== undefined) tool.outputSchema = outputSchema
  const annotations = hints(method)
  if (annotations !== undefined) tool.annotations = annotations
  return { name: toolName(id), operationId: id, method, path, parameters, body, tool }
}

/** Summary, then description; the method and path when the document says neither. */
function describe(operation: JsonObject, where: string): string {
  const parts = [operation.summary, operation.description].filter((part): part is string => typeof part === 'string' && part.trim() !== '')
  let text = parts.length === 0 ? where : parts.join('\n\n')
  if (operation.deprecated === true) text = `Deprecated. ${text}`
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text
}

/** The first 2xx response's JSON schema, when it describes an object (what structuredContent must be). */
function successSchema(converter: SchemaConverter, operation: JsonObject, where: string): JsonObject | undefined {
  if (!isObject(operation.responses)) return undefined
  const codes = Object.keys(operation.responses).filter((code) => /^2(\d\d|XX)$/i.test(code)).sort()
  for (const code of codes) {
    const response = converter.deref(operation.responses[code], where)
    if (response === undefined || !isObject(response.content)) continue
    const mediaType = Object.keys(response.content).find(isJsonType)
    if (mediaType === undefined) continue
    const media = response.content[mediaType]
    if (!isObject(media) || media.schema === undefined) return undefined
    const converted = converter.convert(media.schema, `${where} response ${code}`)
    if (isObject(converted) && converted.type === 'object') return converted
    return undefined
  }
  return undefined
}

function hints(method: string): JsonObject | undefined {
  if (method === 'GET' || method === 'HEAD') return { readOnlyHint: true }
  if (method === 'DELETE') return { destructiveHint: true }
  return undefined
}

/** `application/json`, `application/problem+json`, `application/json; charset=utf-8`. */
export function isJsonType(mediaType: string): boolean {
  const type = mediaType.split(';')[0]!.trim().toLowerCase()
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/** A glob (`*` any run, `?` one character) as an anchored regular expression. */
function glob(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
  return new RegExp(`^${body}$`)
}
