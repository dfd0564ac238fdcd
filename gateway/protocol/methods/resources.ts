/** resources/list, resources/templates/list, resources/read, and (when declared) subscribe/unsubscribe. */
import { McpError, RpcCode } from '../../errors.ts'
import { readResource } from '../../registry/invoke.ts'
import type { JsonObject } from '../mcp-types.ts'
import type { MethodTable } from './index.ts'
import { cursorOf, hiddenOf } from './params.ts'

function uriOf(params: JsonObject, method: string): string {
  if (typeof params.uri !== 'string') throw new McpError(RpcCode.InvalidParams, `${method} needs params.uri (a string)`)
  return params.uri
}

export const resourceMethods: MethodTable = {
  'resources/list': (endpoint, record, params) =>
    endpoint.registry.listResources(cursorOf(params), hiddenOf(record)) as unknown as JsonObject,

  'resources/templates/list': (endpoint, record, params) =>
    endpoint.registry.listResourceTemplates(cursorOf(params), hiddenOf(record)) as unknown as JsonObject,

  'resources/read': async (endpoint, record, params, ctx) =>
    (await readResource(endpoint.registry, uriOf(params, 'resources/read'), ctx, hiddenOf(record))) as unknown as JsonObject,
}

export const subscriptionMethods: MethodTable = {
  'resources/subscribe': async (endpoint, record, params) => {
    const uri = uriOf(params, 'resources/subscribe')
    await endpoint.store.update(record.id, { subscribe: uri })
    endpoint.emit('resources/subscribe', record, params)
    return {}
  },

  'resources/unsubscribe': async (endpoint, record, params) => {
    const uri = uriOf(params, 'resources/unsubscribe')
    await endpoint.store.update(record.id, { unsubscribe: uri })
    endpoint.emit('resources/unsubscribe', record, params)
    return {}
  },
}
