/**
 * prompts/get: check the arguments (strings only, required ones present), run the callback, and turn
 * its return value into a GetPromptResult. Unlike a tool, a failing prompt is a JSON-RPC error: bad
 * arguments are InvalidParams here, and whatever the callback throws propagates to the protocol layer.
 */
import { McpError, RpcCode } from '../wire/errors.ts'
import type { RequestContext } from './context.ts'
import type { GetPromptResult, PromptMessage } from '../wire/mcp-types.ts'
import { isRecord } from './component-checks.ts'
import type { PromptEntry } from './entries.ts'

/** Renders a prompt; throws McpError(InvalidParams) for missing or non-string arguments. */
export async function getPrompt(entry: PromptEntry, args: unknown, ctx: RequestContext): Promise<GetPromptResult> {
  const input = promptArguments(entry, args)
  const value = await entry.prompt.callback(input, ctx)
  return toResult(entry, value)
}

function promptArguments(entry: PromptEntry, args: unknown): Record<string, string> {
  if (args === undefined || args === null) {
    if (entry.required.length > 0) throw missing(entry.required[0] as string)
    return {}
  }
  if (!isRecord(args)) throw new McpError(RpcCode.InvalidParams, 'Invalid arguments: must be an object of strings')
  for (const name in args) {
    if (typeof args[name] !== 'string') throw new McpError(RpcCode.InvalidParams, `Invalid argument: ${name} must be a string`)
  }
  for (const name of entry.required) {
    if (args[name] === undefined) throw missing(name)
  }
  return args as Record<string, string>
}

function missing(name: string): McpError {
  return new McpError(RpcCode.InvalidParams, `Missing required argument: ${name}`)
}

function toResult(entry: PromptEntry, value: unknown): GetPromptResult {
  const description = entry.prompt.description
  let messages: PromptMessage[]
  if (typeof value === 'string') messages = [{ role: 'user', content: { type: 'text', text: value } }]
  else if (Array.isArray(value)) messages = value as PromptMessage[]
  else if (isRecord(value) && Array.isArray(value.messages)) return value as unknown as GetPromptResult
  else throw new Error(`Prompt ${JSON.stringify(entry.prompt.name)} returned ${describe(value)}, not a string, messages or a GetPromptResult`)
  return description === undefined ? { messages } : { description, messages }
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (isRecord(value)) return 'an object without messages'
  return typeof value
}
