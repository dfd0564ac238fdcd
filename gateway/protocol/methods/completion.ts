/** completion/complete for prompt arguments and resource template variables. */
import { complete } from '../../registry/complete.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { MethodTable } from './method-handler.ts'

export const completionMethods: MethodTable = {
  'completion/complete': async (host, _record, params, ctx) => {
    const context = params.context as JsonObject | undefined
    return (await complete(host.registry, params.ref, params.argument, context?.arguments, ctx))
  },
}
