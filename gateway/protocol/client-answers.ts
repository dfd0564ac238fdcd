/**
 * Checks the client's answers to server→client requests before a handler sees them: the shape of a
 * `sampling/createMessage` result, an elicitation's action and (on accept) its content against the
 * `requestedSchema` the handler sent, and the `roots/list` result. A malformed answer is an
 * `InvalidClientAnswerError` naming the method and what is wrong, which a handler can catch; one it
 * lets through becomes an `isError` result with that text (the client's own mistake, no secret).
 */
import { compileObjectSchema, describeErrors, type ValidateFunction } from '../registry/json-schema.ts'
import { EdgeError } from '../wire/errors.ts'
import { samplingContentListProblem } from '../wire/sampling-content.ts'
import type { CreateMessageResult, ElicitationSchema, ElicitResult, Root } from '../wire/mcp-types.ts'

const ROLES = new Set(['user', 'assistant'])
const ACTIONS = new Set(['accept', 'decline', 'cancel'])

type Problem = string | undefined

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

// A handler usually passes the same schema object on every call: compiled once per object.
const compiled = new WeakMap<object, ValidateFunction>()

/**
 * The validator of an elicitation's `requestedSchema`, compiled before the user is asked (a schema
 * that does not compile is the handler's mistake, reported as such, and nothing is sent).
 */
export function elicitationValidator(schema: ElicitationSchema): ValidateFunction {
  let validate = compiled.get(schema)
  if (validate === undefined) {
    try {
      validate = compileObjectSchema(schema)
    } catch (error) {
      throw new TypeError(`elicit: the requested schema ${(error as Error).message}`)
    }
    compiled.set(schema, validate)
  }
  return validate
}

/** The elicitation result, checked: an action, and on accept in form mode content that matches the schema. */
export function checkElicitResult(answer: unknown, validate: ValidateFunction | undefined): ElicitResult {
  if (!isObject(answer)) return fail('elicitation/create', 'the result is not an object')
  if (!ACTIONS.has(answer.action as string)) return fail('elicitation/create', `action must be "accept", "decline" or "cancel" (got ${JSON.stringify(answer.action)})`)
  if (answer.action === 'accept' && validate !== undefined) {
    const content = answer.content ?? {}
    if (!isObject(content)) return fail('elicitation/create', 'content must be an object')
    if (!validate(content)) return fail('elicitation/create', `content does not match the requested schema: ${describeErrors(validate.errors)}`)
  }
  return answer as unknown as ElicitResult
}

/** The sampling result, checked: role, model, and content blocks of a known shape. */
export function checkCreateMessageResult(answer: unknown): CreateMessageResult {
  if (!isObject(answer)) return fail('sampling/createMessage', 'the result is not an object')
  const problem = samplingProblem(answer)
  if (problem !== undefined) return fail('sampling/createMessage', problem)
  return answer as unknown as CreateMessageResult
}

/** The roots, checked: a `roots` list of objects with a string `uri` and optional string `name`. */
export function checkRoots(answer: unknown): Root[] {
  if (!isObject(answer) || !Array.isArray(answer.roots)) return fail('roots/list', 'the result has no "roots" list')
  answer.roots.forEach((root: unknown, index) => {
    if (!isObject(root) || typeof root.uri !== 'string') fail('roots/list', `roots[${index}].uri must be a string`)
    else if (!root.uri.startsWith('file://')) fail('roots/list', `roots[${index}].uri must be a file:// URI (got ${JSON.stringify(root.uri.slice(0, 100))})`)
    else if (root.name !== undefined && typeof root.name !== 'string') fail('roots/list', `roots[${index}].name must be a string`)
  })
  return answer.roots as Root[]
}

function samplingProblem(answer: Record<string, unknown>): Problem {
  if (!ROLES.has(answer.role as string)) return `role must be "user" or "assistant" (got ${JSON.stringify(answer.role)})`
  if (typeof answer.model !== 'string') return 'model must be a string'
  if (answer.stopReason !== undefined && typeof answer.stopReason !== 'string') return 'stopReason must be a string'
  return samplingContentListProblem(answer.content)
}

/**
 * The client answered a server→client request with a result of the wrong shape: `method` names the
 * request, the message what is wrong. Handlers catch it (`error instanceof InvalidClientAnswerError`).
 */
export class InvalidClientAnswerError extends EdgeError {
  readonly method: string
  constructor(method: string, problem: string) {
    super('MCP_EDGE_CLIENT_ANSWER_INVALID', `The client's answer to ${method} is malformed: ${problem}`, { data: { method } })
    this.name = 'InvalidClientAnswerError'
    this.method = method
  }
}

function fail(method: string, problem: string): never {
  throw new InvalidClientAnswerError(method, problem)
}
