/**
 * JSON-RPC 2.0 message shapes, the check that turns an untrusted parsed body into one of them, and
 * the builders for what the gateway sends. MCP 2025-06-18 and later carry exactly one message per
 * POST (no batches).
 */
import { McpError, RpcCode } from './errors.ts'
import type { JsonObject } from './mcp-types.ts'

export type RequestId = string | number

export interface JsonRpcRequest { jsonrpc: '2.0'; id: RequestId; method: string; params?: JsonObject }
export interface JsonRpcNotification { jsonrpc: '2.0'; method: string; params?: JsonObject }
export interface JsonRpcResult { jsonrpc: '2.0'; id: RequestId; result: JsonObject }
export interface JsonRpcErrorObject { code: number; message: string; data?: unknown }
export interface JsonRpcError { jsonrpc: '2.0'; id: RequestId | null; error: JsonRpcErrorObject }
export type JsonRpcResponse = JsonRpcResult | JsonRpcError
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse

/** What an incoming message is, so transports can route it without re-inspecting keys. */
export type Incoming =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse }

/**
 * The longest string id a request may carry. A request's id is held as long as the request (a
 * `subscriptions/listen` stream, for as long as it stays open) and written into every message that
 * answers it, so an id of megabytes multiplies: 200 listen streams with 3.9 MB ids held 747 MB.
 */
export const MAX_ID_LENGTH = 1024

// Integers beyond 2^53 cannot be echoed exactly (JSON.parse already rounded them): refused, not altered.
export function isId(value: unknown): value is RequestId {
  return typeof value === 'string' ? value.length <= MAX_ID_LENGTH : Number.isSafeInteger(value)
}

/**
 * Classifies a parsed body; throws McpError(-32600) naming what is wrong. The returned message is
 * the body itself, not a copy.
 */
export function classify(body: unknown): Incoming {
  if (Array.isArray(body)) throw invalid('batches are not supported: send one JSON-RPC message per request')
  if (typeof body !== 'object' || body === null) throw invalid('the body must be a JSON-RPC object')
  const message = body as Record<string, unknown>
  if (message.jsonrpc !== '2.0') throw invalid('"jsonrpc" must be "2.0"')
  if ('method' in message) {
    if (typeof message.method !== 'string' || message.method === '') throw invalid('"method" must be a non-empty string')
    const params = message.params
    if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
      throw invalid('"params" must be an object')
    }
    if (!('id' in message)) return { kind: 'notification', message: message as unknown as JsonRpcNotification }
    if (!isId(message.id)) throw invalid(`"id" must be a string of at most ${MAX_ID_LENGTH} characters or a safe integer (|id| < 2^53)`)
    return { kind: 'request', message: message as unknown as JsonRpcRequest }
  }
  if ('result' in message || 'error' in message) {
    if (!isId(message.id)) throw invalid('a response needs the "id" of the request it answers')
    return { kind: 'response', message: message as unknown as JsonRpcResponse }
  }
  throw invalid('a JSON-RPC message needs "method" (request, notification) or "result"/"error" (response)')
}

function invalid(reason: string): McpError {
  return new McpError(RpcCode.InvalidRequest, `Invalid Request: ${reason}`)
}

/** A success response. */
export function resultMessage(id: RequestId, result: JsonObject): JsonRpcResult {
  return { jsonrpc: '2.0', id, result }
}

/** An error response; `id` is null when the request's id could not be read. */
export function errorMessage(id: RequestId | null, code: number, message: string, data?: unknown): JsonRpcError {
  return data === undefined
    ? { jsonrpc: '2.0', id, error: { code, message } }
    : { jsonrpc: '2.0', id, error: { code, message, data } }
}

/** The id of a body that may not be valid JSON-RPC, for error responses that should still echo it. */
export function idOf(body: unknown): RequestId | null {
  if (typeof body !== 'object' || body === null) return null
  const id = (body as Record<string, unknown>).id
  return isId(id) ? id : null
}

export function notification(method: string, params?: JsonObject): JsonRpcNotification {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }
}
