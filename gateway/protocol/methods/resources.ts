/** resources/list, resources/templates/list, resources/read, and (when declared) subscribe/unsubscribe. */
import { McpError, RpcCode } from '../../wire/errors.ts'
import { readResource } from '../../registry/read-resource.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { SessionRecord } from '../../store/store.ts'
import type { MethodHost, MethodTable } from './method-handler.ts'
import { checkSubscriptionUri, tooManySubscriptions } from '../session-limits.ts'
import { checkScopes, cursorOf, hiddenOf } from './params.ts'

function uriOf(params: JsonObject, method: string): string {
  if (typeof params.uri !== 'string') throw new McpError(RpcCode.InvalidParams, `${method} needs params.uri (a string)`)
  return params.uri
}

export const resourceMethods: MethodTable = {
  'resources/list': (host, record, params, ctx) => {
    const view = host.viewOf(record)
    return view.listResources(cursorOf(params), hiddenOf(host, view, record, ctx.caller))
  },

  'resources/templates/list': (host, record, params, ctx) => {
    const view = host.viewOf(record)
    return view.listResourceTemplates(cursorOf(params), hiddenOf(host, view, record, ctx.caller))
  },

  'resources/read': async (host, record, params, ctx) => {
    const uri = uriOf(params, 'resources/read')
    const hidden = record.hidden.length === 0 ? undefined : new Set(record.hidden)
    if (host.scopes !== undefined) {
      // The component the URI resolves to decides (a static resource, else the template that matches).
      const resolved = host.viewOf(record).resolveResource(uri, hidden)
      if (resolved !== undefined) {
        const name = resolved.kind === 'resource' ? resolved.entry.resource.uri : resolved.entry.template.uriTemplate
        checkScopes(host, ctx.caller, resolved.kind, name)
      }
    }
    return await readResource(host.viewOf(record), uri, ctx, hidden)
  },
}

/**
 * Keeps a subscription to `uri` in the session, within the route's bound, once the URI is known to
 * be served (by the registry, or on a proxy route by the upstream the URI leads to).
 */
export async function keepSubscription(host: MethodHost, record: SessionRecord, uri: string, params: JsonObject): Promise<JsonObject> {
  const limits = host.route.limits
  const updated = await host.store.update(record.id, { subscribe: uri, max: limits.subscriptions })
  if (updated !== undefined && !updated.subscriptions.includes(uri)) throw tooManySubscriptions(limits)
  host.emit('resources/subscribe', record, params)
  return {}
}

export const subscriptionMethods: MethodTable = {
  'resources/subscribe': async (host, record, params) => {
    const uri = uriOf(params, 'resources/subscribe')
    const limits = host.route.limits
    checkSubscriptionUri(uri, limits)
    // As lua-resty-mcp: only a URI this session could read (a resource, or a template's match) is subscribable.
    const hidden = record.hidden.length === 0 ? undefined : new Set(record.hidden)
    if (host.viewOf(record).resolveResource(uri, hidden) === undefined) throw new McpError(RpcCode.ResourceNotFound, 'Resource not found', { uri })
    return keepSubscription(host, record, uri, params)
  },

  'resources/unsubscribe': async (host, record, params) => {
    const uri = uriOf(params, 'resources/unsubscribe')
    await host.store.update(record.id, { unsubscribe: uri })
    host.emit('resources/unsubscribe', record, params)
    return {}
  },
}
