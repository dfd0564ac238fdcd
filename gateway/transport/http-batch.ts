/**
 * A JSON-RPC batch POSTed to a Streamable HTTP route: only for a session that negotiated 2025-03-26
 * (that revision has batches; 2025-06-18 removed them), refused otherwise with MCP_EDGE_BATCH_REFUSED.
 * Each message goes through the same limits and front door as one POSTed alone; the answer is one
 * JSON array of the requests' responses once all have settled (202 when nothing in it is answered: notifications and responses only).
 * What a request sends before its response (progress, logs, server→client requests) goes to the
 * session's standalone stream: a JSON array cannot carry it.
 *
 *   array ─► session (404 …) ─► 2025-03-26? ─► ≤ limits.batch_size? ─► each: classify ─► limits ─► serveSession
 *                                                                          └─► responses ─► [ … ] │ 202
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { callerOf } from '../edge/access-hook.ts'
import { limitRefusal, toolLimitResult, type LimitOutcome } from '../edge/limits.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { RequestSink } from '../protocol/sink.ts'
import type { SessionRecord } from '../store/store.ts'
import { calledTool } from '../wire/called-tool.ts'
import { EdgeCode, EdgeError, type McpError, RpcCode } from '../wire/errors.ts'
import { classify, errorMessage, idOf, resultMessage, type Incoming, type JsonRpcMessage, type JsonRpcResponse } from '../wire/jsonrpc.ts'
import { messageText } from '../wire/message-text.ts'
import { header, type HttpRoute } from './http-route.ts'
import { replyError } from './reply-error.ts'
import { serveSession } from './session-door.ts'

/** The one revision whose sessions may batch. */
export const BATCH_VERSION = '2025-03-26'

/** Serves a POSTed array; every refusal is a row of the error table, every item's failure its own response. */
export async function serveBatch(http: HttpRoute, request: FastifyRequest, reply: FastifyReply, items: unknown[], started: number): Promise<unknown> {
  const { endpoint, log } = http
  const sessionId = header(request, 'mcp-session-id')
  if (sessionId === undefined) return replyError(reply, refused('no session is named (initialize cannot be batched)'))
  const record = await http.sessionFor(request, reply, null, sessionId)
  if (record === undefined) return undefined
  if (record.protocolVersion !== BATCH_VERSION) return replyError(reply, refused(`this session negotiated ${record.protocolVersion}`))
  if (items.length === 0) return replyError(reply, new EdgeError('MCP_EDGE_INVALID_REQUEST', 'Invalid Request: an empty batch'))
  const max = endpoint.route.limits.batch_size
  if (items.length > max) return replyError(reply, refused(`${items.length} messages are more than limits.batch_size (${max})`))
  const responses: JsonRpcResponse[] = []
  const running: Array<Promise<void>> = []
  for (const item of items) {
    let incoming: Incoming
    try {
      incoming = classify(item)
    } catch (error) {
      responses.push(errorMessage(idOf(item), RpcCode.InvalidRequest, (error as McpError).message))
      continue
    }
    if (incoming.kind === 'request' && incoming.message.method === 'initialize') {
      responses.push(errorMessage(incoming.message.id, RpcCode.InvalidRequest, 'Invalid Request: initialize cannot be part of a batch'))
      continue
    }
    running.push(serveItem(http, request, record, incoming, responses))
  }
  await Promise.all(running)
  // 202 only when there is nothing to answer: a malformed member (`[[…]]`, `[1]`) is answered with its
  // -32600 even in a batch without requests, as JSON-RPC 2.0 answers `[1,2,3]`.
  const status = responses.length === 0 ? 202 : 200
  log.end(started, 'batch', status, record.id, undefined, record.principal)
  if (status === 202) return reply.code(202).send()
  // Each response's text as it would be alone (messageText: a proxied result passed on unread, or a shared one, spliced in).
  return reply.code(200).header('content-type', 'application/json').send(`[${responses.map(messageText).join(',')}]`)
}

function refused(why: string): EdgeError {
  return new EdgeError('MCP_EDGE_BATCH_REFUSED', `${EdgeCode.MCP_EDGE_BATCH_REFUSED.message}: ${why}`)
}

/** One message of the batch through the route's limits and the front door; its response (if any) lands in `responses`. */
async function serveItem(http: HttpRoute, request: FastifyRequest, record: SessionRecord, incoming: Incoming, responses: JsonRpcResponse[]): Promise<void> {
  const limits = http.limits
  const caller = callerOf(request)
  const isRequest = incoming.kind === 'request'
  let outcome: LimitOutcome = false
  if (limits !== undefined) {
    const tool = isRequest && incoming.message.method === 'tools/call' ? calledTool(incoming.message.params, http.endpoint.route.catalogue === 'search') : undefined
    outcome = await limits.check(limits.needsCaller ? caller : undefined, isRequest ? record.id : undefined, tool)
  }
  if (typeof outcome !== 'boolean') {
    if (!isRequest) return
    const id = incoming.message.id
    if (outcome.kind === 'tool') responses.push(resultMessage(id, toolLimitResult(outcome)))
    else {
      const refusal = limitRefusal(outcome)
      responses.push(errorMessage(id, refusal.rpcCode, refusal.message, refusal.data))
    }
    return
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const sink = batchSink(http.endpoint, record.id, (response) => {
        if (response !== undefined) responses.push(response)
        resolve()
      })
      const running = serveSession(http.endpoint, record, incoming, () => sink, caller, request.headers)
      // A notification's failure has no one to answer (as when POSTed alone); the others' answers still go.
      if (!isRequest) {
        if (running === undefined) resolve()
        else running.then(() => resolve(), (error: unknown) => {
          http.endpoint.logger.warn({ err: error, sessionId: record.id }, 'a batched notification failed')
          resolve()
        })
      } else if (running !== undefined) running.catch(reject)
    })
  } finally {
    if (outcome === true) limits!.done(record.id)
  }
}

/** A request's sink inside a batch: its response collected, what comes before it on the session's standalone stream. */
function batchSink(endpoint: McpEndpoint, sessionId: string, settled: (response: JsonRpcResponse | undefined) => void): RequestSink {
  return {
    send: (message: JsonRpcMessage) => endpoint.notifier.notifySession(sessionId, message),
    respond: (response) => settled(response),
    abandon: () => settled(undefined),
    detach: () => false,
  }
}
