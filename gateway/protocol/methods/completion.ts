/** completion/complete for prompt arguments and resource template variables. */
import { complete } from '../../registry/invoke.ts'
import type { JsonObject } from '../mcp-types.ts'
import type { MethodTable } from './index.ts'

export const completionMethods: MethodTable = {
  'completion/complete': async (endpoint, _record, params, ctx) => {
    const context = params.context as JsonObject | undefined
    return (await complete(endpoint.registry, params.ref, params.argument, context?.arguments, ctx)) as unknown as JsonObject
  },
}
