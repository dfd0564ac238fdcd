/**
 * Which tool a tools/call calls. On a route in search mode (`catalogue: search`) the model calls
 * tools through the meta-tool `call_tool {name, arguments}`; everything that decides on the tool
 * (scopes at the edge, the access module's `tool`, per-tool rate limits) must see the tool it calls,
 * exactly as for a direct call. One rule, read at each of those doors.
 */
import type { JsonObject } from './mcp-types.ts'

/** Tool search's meta-tool that calls another tool by name. */
export const CALL_TOOL = 'call_tool'

/** The tool `params` (of a tools/call) call: `name`, or on a search route, the tool call_tool's arguments name. */
export function calledTool(params: JsonObject | undefined, search: boolean): string | undefined {
  const name = params?.name
  if (typeof name !== 'string') return undefined
  if (!search || name !== CALL_TOOL) return name
  const args = params!.arguments
  const inner = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as JsonObject).name : undefined
  return typeof inner === 'string' ? inner : name
}
