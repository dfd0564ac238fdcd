/**
 * tools/call: validate the arguments with the tool's compiled validator, run the callback, and turn
 * whatever it returned (or threw) into a CallToolResult. A failing tool is an `isError` result the
 * model can read; only protocol errors (McpError) and cancellation escape as exceptions.
 *
 *   args ─► validateInput ─✗─► isError "Invalid arguments: /message must be string"
 *              │ ✓
 *              ▼
 *          callback ─throws─► McpError or aborted: rethrow · ToolError: its content
 *              │               · the gateway's own EdgeError (no capability, timeout), the client's error answer: its message
 *              │               · anything else: logged with a reference, "Tool X failed (ref R)" (failure-report.ts)
 *              │ returns
 *              ▼
 *   string → text · array → content · {content: […]} → as is · other object → structuredContent + JSON text
 *              │
 *              ▼
 *   validateOutput (when an outputSchema is declared) ─✗─► isError "Tool output did not match its outputSchema: …"
 */
import { ClientAnswerError, EdgeError, McpError } from '../wire/errors.ts'
import type { RequestContext } from './context.ts'
import type { CallToolResult, ContentBlock, JsonObject } from '../wire/mcp-types.ts'
import { isRecord } from './component-checks.ts'
import { ToolError } from './components.ts'
import type { ToolEntry } from './entries.ts'
import { reportFailure, type FailureLog } from './failure-report.ts'
import { describeErrors } from './json-schema.ts'

/**
 * Calls a tool: an `isError` result for bad arguments, a failing callback or a bad output; `log` gets
 * unexpected exceptions. Synchronous when the callback is (most tools): no promise and no microtask
 * on the hot path.
 */
export function callTool(entry: ToolEntry, args: unknown, ctx: RequestContext, log: FailureLog): CallToolResult | Promise<CallToolResult> {
  const input = args === undefined ? {} : args
  const validateInput = entry.validateInput
  if (!validateInput(input)) return errorResult(`Invalid arguments: ${describeErrors(validateInput.errors)}`)
  let value: unknown
  try {
    value = entry.tool.callback(input as JsonObject, ctx)
  } catch (err) {
    return failedResult(err, entry, ctx, log)
  }
  if (isPromiseLike(value)) return Promise.resolve(value).then((settled) => toResult(entry, settled), (err: unknown) => failedResult(err, entry, ctx, log))
  return toResult(entry, value)
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function'
}

/** What a throwing callback becomes; a cancelled request gets no response at all, and an McpError is the tool asking for a protocol error. */
function failedResult(err: unknown, entry: ToolEntry, ctx: RequestContext, log: FailureLog): CallToolResult {
  if (err instanceof McpError || ctx.signal.aborted) throw err
  if (err instanceof ToolError) return toolErrorResult(err)
  // A store outage met inside the tool (ctx.session.state, a session's catalogue) is the gateway's
  // failure, not the tool's: the request fails as the gateway's own writes do (503, -32000), so the
  // client retries rather than the model reading "Tool X failed".
  if (err instanceof EdgeError && err.code === 'MCP_EDGE_STORE_UNAVAILABLE') throw err
  // The gateway's own refusals that reach a tool through ctx (no elicitation capability, the client
  // can no longer answer, a timeout) are worded for the client.
  if (err instanceof EdgeError) return errorResult(err.message)
  if (err instanceof ClientAnswerError) return errorResult(messageOf(err))
  const name = entry.tool.name
  return errorResult(`Tool ${name} failed (ref ${reportFailure(log, err, { tool: name, requestId: ctx.requestId })})`)
}

function toResult(entry: ToolEntry, value: unknown): CallToolResult {
  let result: CallToolResult
  try {
    result = normalise(value)
  } catch (err) {
    return errorResult(`Tool returned an invalid result: ${messageOf(err)}`)
  }
  const validateOutput = entry.validateOutput
  if (validateOutput === undefined || result.isError === true) return result
  // The spec requires structured results that conform to a declared outputSchema; a miss is a server bug.
  if (result.structuredContent === undefined) return errorResult('Tool output did not match its outputSchema: no structuredContent')
  if (!validateOutput(result.structuredContent)) {
    return errorResult(`Tool output did not match its outputSchema: ${describeErrors(validateOutput.errors)}`)
  }
  return result
}

function normalise(value: unknown): CallToolResult {
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] }
  if (Array.isArray(value)) return { content: value as ContentBlock[] }
  if (isRecord(value)) {
    if (Array.isArray(value.content)) return value as unknown as CallToolResult
    if (value.isError === true) {
      // `{isError: true, structuredContent}` without content: give clients that ignore structure the JSON.
      const structured = value.structuredContent
      return { ...value, content: structured === undefined ? [] : [jsonText(structured)], isError: true }
    }
    return { content: [jsonText(value)], structuredContent: value }
  }
  if (value === undefined || value === null) return { content: [] }
  throw new Error(`unsupported return value of type ${typeof value}`)
}

function toolErrorResult(err: ToolError): CallToolResult {
  const result: CallToolResult = { content: err.content ?? [{ type: 'text', text: messageOf(err) }], isError: true }
  if (err.structuredContent !== undefined) result.structuredContent = err.structuredContent
  return result
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true }
}

function jsonText(value: unknown): ContentBlock {
  const text = JSON.stringify(value)
  if (typeof text !== 'string') throw new Error('structured content is not JSON')
  return { type: 'text', text }
}

// Never a stack: the text goes to the model and the client.
function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message !== '' ? err.message : err.name
  let text = ''
  try {
    text = String(err)
  } catch {
    // An object without a usable toString (Object.create(null)) still makes an error result.
  }
  return text !== '' ? text : 'Tool failed'
}
