/**
 * What an upstream sends on its own, taken to the downstream client:
 *
 *   upstream request (sampling, elicitation, roots) ──► the downstream request whose upstream stream
 *        │                                              carried it: ctx.createMessage / elicit / listRoots
 *        │                                              on that request's stream (any worker may get the
 *        │                                              answer: the endpoint routes it back over the bus)
 *        └── no related request (a WebSocket, the GET stream) ──► the session's standalone stream
 *   notifications/message        ──► the related request's stream, else the session; logger tagged with the upstream
 *   list_changed                 ──► the session (when the route declares list_changed for that list)
 *   resources/updated            ──► the session, when it subscribed to that URI
 *   elicitation/complete         ──► the related request, else the session
 *
 * The answer goes back to the upstream as its request's result, or as a JSON-RPC error.
 */
import type { McpClient } from '../client/client.ts'
import type { IncomingRequestExtra } from '../client/protocol.ts'
import { EdgeError, McpError, RpcCode } from '../wire/errors.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { RequestContext, SessionView } from '../registry/context.ts'
import { notification, type JsonRpcMessage } from '../wire/jsonrpc.ts'
import { levelPasses } from '../protocol/request-context.ts'
import type { ElicitationSchema, JsonObject, LogLevel, SamplingMessage } from '../wire/mcp-types.ts'
import type { UpstreamLink } from './upstream-link.ts'
import { ParkedCall } from './cross-era-park.ts'

/** What the upstream's requests are asked through: a request's ctx, or the session's view. */
type Asker = Pick<RequestContext, 'elicit' | 'createMessage' | 'listRoots'>

/** Installs the relay on `client` for `link`; `related` values are the ctx of the forwarded request. */
/**
 * `onListChanged`: the route's list cache is on, so an upstream's list_changed is the whole route's
 * (its cached lists are dropped, every session hears it) rather than this session's alone.
 */
export function installRelay(endpoint: McpEndpoint, client: McpClient, link: UpstreamLink, onListChanged?: (list: 'tools' | 'prompts' | 'resources') => void): void {
  const name = link.upstream.name
  const session = link.owner.session

  const asker = async (extra: IncomingRequestExtra): Promise<Asker> => {
    if (isContext(extra.related)) return extra.related
    if (session === '') throw new McpError(RpcCode.InternalError, 'This request reached no downstream request to ask (stateless pool)')
    const record = await endpoint.store.get(session)
    if (record === undefined) throw new McpError(RpcCode.InternalError, 'The downstream session ended')
    return endpoint.sessionView(record) as SessionView
  }

  client.onRequest('sampling/createMessage', async (params, extra) => {
    // A stateless client's call on this session: held until its retry answers (cross-era-park.ts).
    if (extra.related instanceof ParkedCall) return extra.related.ask('sampling/createMessage', params, extra.signal)
    const { messages, maxTokens, ...rest } = params
    delete rest._meta
    const ask = await asker(extra)
    return (await relayed(() => ask.createMessage(messages as SamplingMessage[], maxTokens as number, rest as JsonObject))) as unknown as JsonObject
  })
  client.onRequest('elicitation/create', async (params, extra) => {
    if (extra.related instanceof ParkedCall) return extra.related.ask('elicitation/create', params, extra.signal)
    const ask = await asker(extra)
    const message = String(params.message ?? '')
    const target = params.mode === 'url'
      ? { mode: 'url' as const, url: String(params.url), elicitationId: String(params.elicitationId) }
      : (params.requestedSchema as ElicitationSchema)
    return (await relayed(() => ask.elicit(message, target))) as unknown as JsonObject
  })
  client.onRequest('roots/list', async (params, extra) => {
    if (extra.related instanceof ParkedCall) return extra.related.ask('roots/list', params, extra.signal)
    const ask = await asker(extra)
    return { roots: await relayed(() => ask.listRoots()) } as unknown as JsonObject
  })

  client.onNotification('notifications/message', (params, related) => {
    const level = params.level as LogLevel
    const logger = typeof params.logger === 'string' ? `${name}/${params.logger}` : name
    if (isContext(related) || related instanceof ParkedCall) return related.log(level, params.data, logger)
    if (session === '' || !endpoint.logging) return
    void endpoint.store.get(session).then((record) => {
      if (record === undefined || !levelPasses(level, record.logLevel)) return
      endpoint.notifier.notifySession(session, notification('notifications/message', { level, logger, data: params.data as JsonObject }))
    }, () => undefined)
  })
  for (const list of ['tools', 'prompts', 'resources'] as const) {
    client.onNotification(`notifications/${list}/list_changed`, () => {
      if (onListChanged !== undefined) return onListChanged(list)
      const declared = endpoint.route.capabilities[list]
      if (declared === false || !declared.list_changed) return
      const message = notification(`notifications/${list}/list_changed`)
      if (session === '') endpoint.notifier.listeners.deliver(message)
      else endpoint.notifier.notifySession(session, message)
    })
  }
  client.onNotification('notifications/resources/updated', (params) => {
    const uri = params.uri
    if (typeof uri !== 'string') return
    if (session === '') return endpoint.notifier.listeners.deliver(notification('notifications/resources/updated', { uri }))
    void endpoint.store.get(session).then((record) => {
      if (record?.subscriptions.includes(uri)) endpoint.notifier.notifySession(session, notification('notifications/resources/updated', { uri }))
    }, () => undefined)
  })
  client.onNotification('notifications/elicitation/complete', (params, related) => {
    const id = String(params.elicitationId)
    if (isContext(related)) return related.elicitationComplete(id)
    if (session !== '') endpoint.notifier.notifySession(session, notification('notifications/elicitation/complete', { elicitationId: id }))
  })
}

/** A notification a stateless upstream sent before its response, taken to the downstream request. */
export function relayToRequest(upstream: string, message: JsonRpcMessage, ctx: RequestContext): void {
  if (!('method' in message) || 'id' in message) return
  const params = message.params ?? {}
  if (message.method === 'notifications/progress' && typeof params.progress === 'number') {
    ctx.progress(params.progress, params.total as number | undefined, params.message as string | undefined)
  } else if (message.method === 'notifications/message') {
    ctx.log(params.level as LogLevel, params.data, typeof params.logger === 'string' ? `${upstream}/${params.logger}` : upstream)
  }
}

function isContext(value: unknown): value is RequestContext {
  return typeof value === 'object' && value !== null && 'elicit' in value && 'requestId' in value
}

/** The downstream's answer, or its refusal as the JSON-RPC error the upstream gets. */
async function relayed<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask()
  } catch (error) {
    if (error instanceof McpError) throw error
    if (error instanceof EdgeError) {
      // A client without the capability would answer "method not found" itself.
      throw new McpError(error.code === 'MCP_EDGE_CLIENT_CAPABILITY_MISSING' ? RpcCode.MethodNotFound : RpcCode.InternalError, error.message)
    }
    const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown }
    throw new McpError(typeof code === 'number' ? code : RpcCode.InternalError, String(message ?? 'The client refused'), data)
  }
}
