/** prompts/list and prompts/get. */
import { McpError, RpcCode } from '../../wire/errors.ts'
import { getPrompt } from '../../registry/get-prompt.ts'
import type { MethodTable } from './method-handler.ts'
import { checkScopes, cursorOf, hiddenOf } from './params.ts'

export const promptMethods: MethodTable = {
  'prompts/list': (host, record, params, ctx) => {
    const view = host.viewOf(record)
    return view.listPrompts(cursorOf(params), hiddenOf(host, view, record, ctx.caller))
  },

  'prompts/get': async (host, record, params, ctx) => {
    const name = params.name
    if (typeof name !== 'string') throw new McpError(RpcCode.InvalidParams, 'prompts/get needs params.name (a string)')
    const entry = host.viewOf(record).prompt(name)
    if (entry === undefined || (record.hidden.length > 0 && record.hidden.includes(`prompt:${name}`))) {
      throw new McpError(RpcCode.InvalidParams, `Unknown prompt: ${name}`)
    }
    checkScopes(host, ctx.caller, 'prompt', name)
    return (await getPrompt(entry, params.arguments, ctx))
  },
}
