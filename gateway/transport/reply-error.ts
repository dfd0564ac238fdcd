/**
 * The one way a refusal leaves over HTTP: an `EdgeError` (a row of the error table) becomes its
 * status, its headers and a JSON-RPC error body with the request's id.
 */
import type { ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import type { EdgeError } from '../wire/errors.ts'
import { errorMessage, type RequestId } from '../wire/jsonrpc.ts'

/** Sends `error` as the answer; `id` is null when the request's id is unknown. */
export function replyError(reply: FastifyReply, error: EdgeError, id: RequestId | null = null): FastifyReply {
  if (error.headers !== undefined) reply.headers(error.headers)
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
