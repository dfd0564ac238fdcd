/** prompts/list and prompts/get. */
import { McpError, RpcCode } from '../../errors.ts'
import { getPrompt } from '../../registry/invoke.ts'
import type { JsonObject } from '../mcp-types.ts'
import type { MethodTable } from './index.ts'
import { cursorOf, hiddenOf } from './params.ts'

export const promptMethods: MethodTable = {
  'prompts/list': (endpoint, record, params) =>
    endpoint.registry.listPrompts(cursorOf(params), hiddenOf(record)) as unknown as JsonObject,

  'prompts/get': async (endpoint, record, params, ctx) => {
    const name = params.name
    if (typeof name !== 'string') throw new McpError(RpcCode.InvalidParams, 'prompts/get needs params.name (a string)')
    const entry = endpoint.registry.prompt(name)
    if (entry === undefined || (record.hidden.length > 0 && record.hidden.includes(`prompt:${name}`))) {
      throw new McpError(RpcCode.InvalidParams, `Unknown prompt: ${name}`)
    }
    return (await getPrompt(entry, params.arguments, ctx)) as unknown as JsonObject
  },
}
