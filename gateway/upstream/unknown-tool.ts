/**
 * One answer for a tool nobody has, whichever side found out. The spec's answer is a JSON-RPC error
 * -32602, and a handler route gives it (`Unknown tool: nope`). Upstream servers built on the SDKs
 * give a tool result instead, which a proxy route used to pass on as it came:
 *
 *   TS SDK 1.x McpServer   { isError: true, content: [{ text: "MCP error -32602: Tool nope not found" }] }   (or "… disabled")
 *   Python SDK FastMCP     { isError: true, content: [{ text: "Unknown tool: nope" }] }
 *   a spec-following one   JSON-RPC error -32602 "Unknown tool: nope" / "Tool nope not found"
 *
 * Each is recognised only by its exact text for the name sent up, so a tool's own failure that
 * happens to mention a name is never taken for one; the client then gets -32602 naming the tool as
 * it called it (with its prefix), not as the upstream knows it.
 */
import { McpError, RpcCode } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

/** The texts an upstream uses to say it has no tool `name`. */
function unknownToolTexts(name: string): string[] {
  return [`MCP error ${RpcCode.InvalidParams}: Tool ${name} not found`, `MCP error ${RpcCode.InvalidParams}: Tool ${name} disabled`, `Unknown tool: ${name}`, `Tool ${name} not found`]
}

/** True when `result` is an upstream's tool-result way of saying it has no tool `name`. */
export function isUnknownToolResult(result: JsonObject, name: string): boolean {
  if (result.isError !== true || !Array.isArray(result.content) || result.content.length !== 1) return false
  const [only] = result.content as unknown[]
  const text = typeof only === 'object' && only !== null ? (only as { type?: unknown; text?: unknown }).text : undefined
  return typeof text === 'string' && unknownToolTexts(name).includes(text)
}

/** True when an upstream's JSON-RPC error says it has no tool `name`. */
export function isUnknownToolError(code: number, message: string, name: string): boolean {
  return code === RpcCode.InvalidParams && unknownToolTexts(name).includes(message)
}

/** The spec's answer for an unknown tool, naming it as the client called it. */
export function unknownTool(exposed: string): McpError {
  return new McpError(RpcCode.InvalidParams, `Unknown tool: ${exposed}`)
}
