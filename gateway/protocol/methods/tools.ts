/** tools/list and tools/call. */
import { McpError, RpcCode } from '../../wire/errors.ts'
import { callTool } from '../../registry/call-tool.ts'
import type { MethodTable } from './method-handler.ts'
import { checkScopes, cursorOf, hiddenOf } from './params.ts'

export const toolMethods: MethodTable = {
  'tools/list': (host, record, params, ctx) => {
    const view = host.viewOf(record)
    return view.listTools(cursorOf(params), hiddenOf(host, view, record, ctx.caller))
  },

  'tools/call': (host, record, params, ctx) => {
    const name = params.name
    if (typeof name !== 'string') throw new McpError(RpcCode.InvalidParams, 'tools/call needs params.name (a string)')
    const entry = host.viewOf(record).tool(name)
    if (entry === undefined || (record.hidden.length > 0 && record.hidden.includes(`tool:${name}`))) {
      throw new McpError(RpcCode.InvalidParams, `Unknown tool: ${name}`)
    }
    checkScopes(host, ctx.caller, 'tool', name)
    const taskSupport = entry.tool.taskSupport
    if (taskSupport !== undefined && taskSupport !== 'forbidden' && host.tasks !== undefined) return host.tasks.callTool(entry, params, record, ctx)
    return callTool(entry, params.arguments, ctx, host.logger)
  },
}
