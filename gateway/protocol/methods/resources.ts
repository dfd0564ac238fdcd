/** resources/list, resources/templates/list, resources/read, and (when declared) subscribe/unsubscribe. */
import { McpError, RpcCode } from '../../wire/errors.ts'
import { readResource } from '../../registry/read-resource.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { MethodTable } from './method-handler.ts'
import { cursorOf, hiddenOf } from './params.ts'

function uriOf(params: JsonObject, method: string): string {
  if (typeof params.uri !== 'string') throw new McpError(RpcCode.InvalidParams, `${method} needs params.uri (a string)`)
  return params.uri
}

export const resourceMethods: MethodTable = {
  'resources/list': (host, record, params) =>
    host.registry.listResources(cursorOf(params), hiddenOf(record)),

  'resources/templates/list': (host, record, params) =>
    host.registry.listResourceTemplates(cursorOf(params), hiddenOf(record)),

  'resources/read': async (host, record, params, ctx) =>
    (await readResource(host.registry, uriOf(params, 'resources/read'), ctx, hiddenOf(record))),
}

export const subscriptionMethods: MethodTable = {
  'resources/subscribe': async (host, record, params) => {
    const uri = uriOf(params, 'resources/subscribe')
    await host.store.update(record.id, { subscribe: uri })
    host.emit('resources/subscribe', record, params)
    return {}
  },

  'resources/unsubscribe': async (host, record, params) => {
    const uri = uriOf(params, 'resources/unsubscribe')
    await host.store.update(record.id, { unsubscribe: uri })
    host.emit('resources/unsubscribe', record, params)
    return {}
  },
}
