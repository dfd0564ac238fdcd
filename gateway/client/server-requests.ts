/**
 * What a server asks of the client, checked before a callback sees it, and what an elicitation
 * callback answers, checked before it is sent (lua-resty-mcp's client does both):
 *
 *   sampling/createMessage ─► messages, maxTokens, options well-formed? ─✗─► -32602, callback not called
 *   elicitation/create     ─► message; a flat form schema, or a URL and an id ─✗─► -32602
 *        callback answers accept ─► content matches requestedSchema? ─✗─► -32603, nothing of it sent
 *
 * The raw handlers of `onRequest` replace the built-in ones and skip these checks on purpose.
 */
import { compileObjectSchema, describeErrors, type ValidateFunction } from '../registry/json-schema.ts'
import { McpError, RpcCode } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { samplingContentListProblem } from '../wire/sampling-content.ts'
import type { CreateMessageParams, ElicitParams } from './types.ts'

const ROLES = new Set(['user', 'assistant'])
const INCLUDE_CONTEXT = new Set(['none', 'thisServer', 'allServers'])
// The primitive types a form field may have (MCP elicitation: strings, numbers, booleans, enums;
// 2025-11-25 adds multi-select enums as arrays of strings).
const FIELD_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array'])

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function invalid(method: string, problem: string): McpError {
  return new McpError(RpcCode.InvalidParams, `Invalid ${method} request: ${problem}`)
}

/** The params of a server's `sampling/createMessage`, checked; -32602 naming the problem otherwise. */
export function checkSamplingRequest(params: JsonObject): CreateMessageParams {
  const problem = samplingRequestProblem(params)
  if (problem !== undefined) throw invalid('sampling/createMessage', problem)
  return params as unknown as CreateMessageParams
}

function samplingRequestProblem(params: JsonObject): string | undefined {
  const { messages, maxTokens } = params
  if (!Array.isArray(messages) || messages.length === 0) return 'messages must be a non-empty list'
  for (const [index, message] of messages.entries()) {
    if (!isObject(message)) return `messages[${index}] must be an object`
    if (!ROLES.has(message.role as string)) return `messages[${index}].role must be "user" or "assistant"`
    const content = samplingContentListProblem(message.content)
    if (content !== undefined) return `messages[${index}].${content}`
  }
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) return 'maxTokens must be a positive integer'
  if (params.systemPrompt !== undefined && typeof params.systemPrompt !== 'string') return 'systemPrompt must be a string'
  if (params.temperature !== undefined && typeof params.temperature !== 'number') return 'temperature must be a number'
  if (params.includeContext !== undefined && !INCLUDE_CONTEXT.has(params.includeContext as string)) {
    return 'includeContext must be "none", "thisServer" or "allServers"'
  }
  const stops = params.stopSequences
  if (stops !== undefined && (!Array.isArray(stops) || stops.some((stop) => typeof stop !== 'string'))) return 'stopSequences must be a list of strings'
  for (const key of ['modelPreferences', 'metadata'] as const) {
    if (params[key] !== undefined && !isObject(params[key])) return `${key} must be an object`
  }
  return undefined
}

/** A checked elicitation request, with the validator of its form's content (none in URL mode). */
export interface CheckedElicitation {
  request: ElicitParams
  validate: ValidateFunction | undefined
}

/** The params of a server's `elicitation/create`, checked; -32602 naming the problem otherwise. */
export function checkElicitationRequest(params: JsonObject): CheckedElicitation {
  const method = 'elicitation/create'
  if (typeof params.message !== 'string') throw invalid(method, 'message must be a string')
  const mode = params.mode ?? 'form'
  if (mode === 'url') {
    if (typeof params.url !== 'string' || !URL.canParse(params.url)) throw invalid(method, 'url must be an absolute URL')
    if (typeof params.elicitationId !== 'string' || params.elicitationId === '') throw invalid(method, 'elicitationId must be a non-empty string')
    return { request: params as unknown as ElicitParams, validate: undefined }
  }
  if (mode !== 'form') throw invalid(method, `mode must be "form" or "url" (got ${JSON.stringify(mode)})`)
  const problem = formSchemaProblem(params.requestedSchema)
  if (problem !== undefined) throw invalid(method, `requestedSchema ${problem}`)
  let validate: ValidateFunction
  try {
    validate = compileObjectSchema(params.requestedSchema)
  } catch (error) {
    throw invalid(method, `requestedSchema ${error instanceof Error ? error.message : String(error)}`)
  }
  return { request: params as unknown as ElicitParams, validate }
}

// A form is flat: an object schema whose properties are primitive fields (MCP elicitation).
function formSchemaProblem(schema: unknown): string | undefined {
  if (!isObject(schema) || schema.type !== 'object') return 'must be an object schema ({"type": "object", …})'
  const properties = schema.properties
  if (!isObject(properties)) return 'must have "properties"'
  for (const [name, field] of Object.entries(properties)) {
    if (!isObject(field)) return `property ${JSON.stringify(name)} must be a schema object`
    if (!FIELD_TYPES.has(field.type as string)) return `property ${JSON.stringify(name)} must be a string, number, integer, boolean or enum list field`
  }
  const required = schema.required
  if (required !== undefined && (!Array.isArray(required) || required.some((key) => typeof key !== 'string' || !(key in properties)))) {
    return '"required" must list some of its properties'
  }
  return undefined
}

/**
 * The elicitation callback's result, checked before it is sent: an accepted form's content must
 * match the requested schema. A mismatch is the callback's mistake, so the server gets -32603 and
 * none of the content.
 */
export function checkElicitationAnswer(result: JsonObject, validate: ValidateFunction | undefined): JsonObject {
  if (result.action !== 'accept' || validate === undefined) return result
  const content = result.content ?? {}
  if (!validate(content)) {
    throw new McpError(RpcCode.InternalError, `The elicitation callback's content does not match the requested schema: ${describeErrors(validate.errors)}`)
  }
  return result
}
