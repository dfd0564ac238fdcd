/**
 * completion/complete: find the prompt or resource template a `ref` names, run the completion
 * callback declared for the argument, and clamp the answer to the 100 values MCP allows per response.
 * An argument without a completion callback completes to nothing rather than failing.
 */
import { McpError, RpcCode } from '../wire/errors.ts'
import type { RequestContext } from './context.ts'
import type { CompletionResult } from '../wire/mcp-types.ts'
import type { CompletionCallback } from './components.ts'
import { isRecord } from './component-checks.ts'
import type { Registry } from './registry.ts'

/** MCP 2025-11-25: a completion response carries at most 100 values. */
export const MAX_COMPLETION_VALUES = 100

/**
 * Completes a prompt argument (`ref/prompt` + name) or a template variable (`ref/resource` + the
 * template's uriTemplate, or a static resource's uri, which has nothing to complete). `context` is
 * `params.context.arguments` (the values already chosen); the whole `params.context` is accepted too.
 * Throws McpError(InvalidParams) for a malformed request or an unknown prompt or template.
 */
export async function complete(
  registry: Registry,
  ref: unknown,
  argument: unknown,
  context: unknown,
  ctx: RequestContext,
  hidden?: ReadonlySet<string>,
): Promise<{ completion: CompletionResult }> {
  if (!isRecord(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string') {
    throw new McpError(RpcCode.InvalidParams, 'argument must be {name: string, value: string}')
  }
  const callback = completionFor(registry, ref, argument.name, hidden)
  if (callback === undefined) return { completion: { values: [] } }
  const result = await callback(argument.value, contextArguments(context), ctx)
  return { completion: clamp(result) }
}

function completionFor(
  registry: Registry,
  ref: unknown,
  name: string,
  hidden: ReadonlySet<string> | undefined,
): CompletionCallback | undefined {
  if (!isRecord(ref)) throw new McpError(RpcCode.InvalidParams, 'ref must be an object')
  if (ref.type === 'ref/prompt') {
    if (typeof ref.name !== 'string') throw new McpError(RpcCode.InvalidParams, 'ref/prompt needs a name')
    const entry = registry.prompt(ref.name, hidden)
    if (entry === undefined) throw new McpError(RpcCode.InvalidParams, `Unknown prompt: ${ref.name}`)
    return own(entry.prompt.completions, name)
  }
  if (ref.type === 'ref/resource') {
    if (typeof ref.uri !== 'string') throw new McpError(RpcCode.InvalidParams, 'ref/resource needs a uri')
    const template = registry.template(ref.uri, hidden)
    if (template !== undefined) return own(template.template.completions, name)
    if (registry.resource(ref.uri, hidden) !== undefined) return undefined
    throw new McpError(RpcCode.InvalidParams, `Unknown resource template: ${ref.uri}`)
  }
  throw new McpError(RpcCode.InvalidParams, `Unknown ref type: ${String(ref.type)}`)
}

// `completions` is a plain object from handler code; an argument called "constructor" must not find Object's.
function own(completions: Record<string, CompletionCallback> | undefined, name: string): CompletionCallback | undefined {
  return completions !== undefined && Object.hasOwn(completions, name) ? completions[name] : undefined
}

function contextArguments(context: unknown): Record<string, string> {
  if (!isRecord(context)) return {}
  const map = isRecord(context.arguments) ? context.arguments : context
  const args: Record<string, string> = {}
  for (const key in map) {
    const value = map[key]
    if (typeof value === 'string') args[key] = value
  }
  return args
}

function clamp(result: unknown): CompletionResult {
  if (Array.isArray(result)) {
    checkValues(result)
    if (result.length <= MAX_COMPLETION_VALUES) return { values: result, total: result.length, hasMore: false }
    return { values: result.slice(0, MAX_COMPLETION_VALUES), total: result.length, hasMore: true }
  }
  if (isRecord(result) && Array.isArray(result.values)) {
    checkValues(result.values)
    const completion = result as unknown as CompletionResult
    if (completion.values.length <= MAX_COMPLETION_VALUES) return completion
    const total = Math.max(completion.total ?? 0, completion.values.length)
    return { ...completion, values: completion.values.slice(0, MAX_COMPLETION_VALUES), total, hasMore: true }
  }
  throw new Error('A completion callback must return a list of strings or {values, total?, hasMore?}')
}

function checkValues(values: unknown[]): asserts values is string[] {
  for (const value of values) {
    if (typeof value !== 'string') throw new Error('Completion values must be strings')
  }
}
