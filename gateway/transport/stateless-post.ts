/**
 * A POST on the stateless wire (MCP 2026-07-28): checked in the spec's order — envelope and version
 * (400 with -32020/-32602/-32022), method (404 with -32601), routing headers (400 with -32020) — then
 * served without a session. Progress and logs stream as SSE without event ids; the client closing
 * the response is the cancellation.
 */
import { refusedCall } from '../events/refused-call.ts'
import type { IncomingHttpHeaders } from 'node:http'
import type { Caller } from '../wire/caller.ts'
import { EdgeError, McpError, refusalOf } from '../wire/errors.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { toolLimitResult, type LimitAnswer } from '../edge/limits.ts'
import { resultMessage, type Incoming } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { StatelessDispatcher } from '../protocol/stateless/dispatch.ts'
import { isStatelessMethod } from '../protocol/stateless/dispatch.ts'
import { readEnvelope } from '../protocol/stateless/envelope.ts'
import { checkParamHeaders, checkRoutingHeaders, headerParams } from '../protocol/stateless/headers.ts'
import type { ToolEntry } from '../registry/entries.ts'
import { PostExchange, type ExchangeOptions, type ExchangeReply } from './post-exchange.ts'
import { answerError } from './reply-error.ts'

export interface StatelessPostOptions {
  endpoint: McpEndpoint
  dispatcher: StatelessDispatcher
  /** Shared by every stateless exchange of the route. */
  exchanges: ExchangeOptions
}

/** `x-mcp-header` annotations per tool, read once per registered tool. */
const annotatedHeaders = new WeakMap<ToolEntry, ReadonlyMap<string, string>>()

/**
 * Answers a stateless POST (its `headers`, on `reply`, from `caller`); synchronous unless its handler
 * is (see `StatelessDispatcher.handle`). `toolLimit` is set when the request is a tools/call over its
 * tool's rate limit: it gets that answer.
 */
export function statelessPost(headers: IncomingHttpHeaders, reply: ExchangeReply, caller: Caller, incoming: Incoming, options: StatelessPostOptions, toolLimit?: LimitAnswer): Promise<void> | undefined {
  const { endpoint, dispatcher } = options
  if (incoming.kind === 'notification') {
    if ('hijack' in reply) reply.code(202).send()
    else reply.writeHead(202).end()
    return undefined
  }
  if (incoming.kind === 'response') {
    answerError(reply, new EdgeError('MCP_EDGE_INVALID_REQUEST', 'Invalid Request: a stateless client sends no responses'))
    return undefined
  }
  const message = incoming.message
  const params = message.params ?? {}
  const version = headers['mcp-protocol-version']
  let envelope
  try {
    envelope = readEnvelope(message.params, Array.isArray(version) ? version[0] : version)
    if (!isStatelessMethod(endpoint, message.method)) {
      answerError(reply, new EdgeError('MCP_EDGE_METHOD_NOT_FOUND', `Method not found: ${message.method} (not served on the 2026-07-28 wire)`), message.id)
      return undefined
    }
    checkRoutingHeaders(headers, message.method, params)
    if (message.method === 'tools/call') checkToolHeaders(headers, endpoint, params)
  } catch (error) {
    if (error instanceof EdgeError) answerError(reply, error, message.id)
    else if (error instanceof McpError) answerError(reply, refusalOf(error), message.id)
    else throw error
    return undefined
  }
  const exchange = new PostExchange(reply, undefined, message.method, options.exchanges.log.start(), options.exchanges, undefined, caller.principal)
  if (toolLimit !== undefined) {
    refusedCall(options.endpoint.calls, message.method, message.params, undefined, caller, 'rate_limit', 'over a tool\'s rate limit', true)
    exchange.respond(resultMessage(message.id, dispatcher.complete(toolLimitResult(toolLimit))))
    return undefined
  }
  return dispatcher.handle(message, envelope, exchange, caller, headers)
}

function checkToolHeaders(headers: IncomingHttpHeaders, endpoint: McpEndpoint, params: JsonObject): void {
  if (typeof params.name !== 'string') return
  const entry = endpoint.registry.tool(params.name)
  if (entry === undefined) return
  let annotated = annotatedHeaders.get(entry)
  if (annotated === undefined) annotatedHeaders.set(entry, (annotated = headerParams(entry.descriptor.inputSchema)))
  checkParamHeaders(headers, annotated, params.arguments)
}
