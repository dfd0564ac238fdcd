/**
 * The one way a refusal leaves over HTTP: an `EdgeError` (a row of the error table) becomes its
 * status, its headers and a JSON-RPC error body with the request's id.
 */
import type { ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import type { EdgeError } from '../wire/errors.ts'
import { errorMessage, type RequestId } from '../wire/jsonrpc.ts'

/**
 * The header that names a refused WebSocket upgrade's reason. A WebSocket API client (a browser, the
 * SDK's transport over Node's WebSocket) sees only that the handshake failed; a client on `ws` or
 * any HTTP client reads this (and the body) without parsing JSON.
 */
export const UPGRADE_REASON_HEADER = 'mcp-edge-error'
/** The longest reason the header carries (the body has it whole). */
const REASON_MAX = 256

/** Sends `error` as the answer; `id` is null when the request's id is unknown. */
export function replyError(reply: FastifyReply, error: EdgeError, id: RequestId | null = null): FastifyReply {
  if (error.headers !== undefined) reply.headers(error.headers)
  if ((reply.request as { ws?: boolean }).ws === true) reply.header(UPGRADE_REASON_HEADER, reasonHeader(error))
  return reply.code(error.status).header('content-type', 'application/json').send(JSON.stringify(errorMessage(id, error.rpcCode, error.message, error.data)))
}

/**
 * The same on a response Fastify does not handle (hijacked for SSE before the refusal was known, or
 * served by the hot path), with the Content-Type Fastify gives a string body.
 */
export function writeError(raw: ServerResponse, error: EdgeError, id: RequestId | null = null): void {
  raw.writeHead(error.status, { ...error.headers, 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(errorMessage(id, error.rpcCode, error.message, error.data)))
}

/** `error` as the answer on whichever response an exchange answers on (transport/post-exchange.ts). */
export function answerError(reply: FastifyReply | ServerResponse, error: EdgeError, id: RequestId | null = null): void {
  if ('hijack' in reply) replyError(reply, error, id)
  else writeError(reply, error, id)
}

/** `CODE: message` as a header value: printable ASCII only (a path may carry anything), at most REASON_MAX characters. */
function reasonHeader(error: EdgeError): string {
  const text = `${error.code}: ${error.message}`.replace(/[^\x20-\x7e]/g, '?')
  return text.length <= REASON_MAX ? text : `${text.slice(0, REASON_MAX - 3)}...`
}
