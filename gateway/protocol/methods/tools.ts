/** tools/list and tools/call. */
import { McpError, RpcCode } from '../../errors.ts'
import { callTool } from '../../registry/invoke.ts'
import type { JsonObject } from '../mcp-types.ts'
import type { MethodTable } from './index.ts'
import { cursorOf, hiddenOf } from './params.ts'

export const toolMethods: MethodTable = {
  'tools/list': (endpoint, record, params) =>
    endpoint.registry.listTools(cursorOf(params), hiddenOf(record)) as unknown as JsonObject,

  'tools/call': (endpoint, record, params, ctx) => {
    const name = params.name
    if (typeof name !== 'string') throw new McpError(RpcCode.InvalidParams, 'tools/call needs params.name (a string)')
    const entry = endpoint.registry.tool(name)
    if (entry === undefined || (record.hidden.length > 0 && record.hidden.includes(`tool:${name}`))) {
      throw new McpError(RpcCode.InvalidParams, `Unknown tool: ${name}`)
    }
    return callTool(entry, params.arguments, ctx) as unknown as JsonObject | Promise<JsonObject>
  },
}
