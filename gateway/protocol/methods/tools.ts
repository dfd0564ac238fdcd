/** tools/list and tools/call. */
import { McpError, RpcCode } from '../../wire/errors.ts'
import { callTool } from '../../registry/call-tool.ts'
import type { MethodTable } from './method-handler.ts'
import { callRecordOf } from '../../events/call-record.ts'
import type { RequestContext } from '../../registry/context.ts'
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
    const cache = entry.tool.cache
    if (cache !== undefined && host.results !== undefined) {
      return host.results.through(name, cache.ttl_s * 1000, params, ctx, () => callTool(entry, params.arguments, ctx, host.logger), (cached) => markCached(ctx, cached))
    }
    return callTool(entry, params.arguments, ctx, host.logger)
  },
}

/** Tells the call's record (the audit record reads it) whether the answer came from the result cache. */
export function markCached(ctx: RequestContext, cached: boolean): void {
  const record = callRecordOf(ctx)
  if (record !== undefined) record.cached = cached
}
