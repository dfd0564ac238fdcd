/** completion/complete for prompt arguments and resource template variables. */
import { complete } from '../../registry/complete.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { MethodTable } from './method-handler.ts'
import { checkScopes } from './params.ts'

export const completionMethods: MethodTable = {
  'completion/complete': async (host, record, params, ctx) => {
    // Completing a component's arguments reveals it: the same scopes as using it.
    const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined
    if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') checkScopes(host, ctx.caller, 'prompt', ref.name)
    if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') checkScopes(host, ctx.caller, 'template', ref.uri)
    const context = params.context as JsonObject | undefined
    return (await complete(host.viewOf(record), params.ref, params.argument, context?.arguments, ctx))
  },
}
