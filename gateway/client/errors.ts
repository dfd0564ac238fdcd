/**
 * The client's errors, one class per way a request can fail, so callers branch with `instanceof`:
 *
 *   RpcError        the server answered with a JSON-RPC error (code, message, data)
 *   TransportError  the message never made it, or the answer could not come back (HTTP status, closed socket, exited process)
 *   TimeoutError    no answer within the request's timeout (or a transport's read/write/header timeout)
 *   CancelledError  the caller gave up: a progress callback returned false or the request's signal aborted
 *   ProtocolError   the server broke the protocol (unparseable message, unsupported version, a cursor loop)
 *
 * Local errors carry a stable `MCP_EDGE_CLIENT_*` code; `RpcError` carries the server's numeric code.
 */
import { McpError } from '../wire/errors.ts'
import type { RequestId } from '../wire/jsonrpc.ts'

/** Stable codes of the client's local errors. */
export const ClientErrorCode = {
  Transport: 'MCP_EDGE_CLIENT_TRANSPORT',
  Timeout: 'MCP_EDGE_CLIENT_TIMEOUT',
  Cancelled: 'MCP_EDGE_CLIENT_CANCELLED',
  Protocol: 'MCP_EDGE_CLIENT_PROTOCOL',
} as const
export type ClientErrorCodeName = (typeof ClientErrorCode)[keyof typeof ClientErrorCode]

/** A JSON-RPC error response from the server; `code` is the wire code (-32602, -32002, …). */
export class RpcError extends McpError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data)
    this.name = 'RpcError'
  }
}

/** Options common to the local errors: which request failed, and what caused it. */
export interface LocalErrorOptions {
  requestId?: RequestId
  cause?: unknown
}

abstract class LocalError extends Error {
  abstract readonly code: ClientErrorCodeName
  /** The request this error ends, when it ends one (transports report per-request failures this way). */
  readonly requestId: RequestId | undefined
  constructor(message: string, options: LocalErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.requestId = options.requestId
  }
}

/** The connection failed or closed: an HTTP error status, a refused or dropped socket, an exited process. */
export class TransportError extends LocalError {
  readonly code = ClientErrorCode.Transport
  /** The HTTP status, when an HTTP exchange failed with one. */
  readonly status: number | undefined
  /** The server refused the message itself (an HTTP error status to its POST): it was never processed. */
  readonly refused: boolean
  /** The `WWW-Authenticate` of a 401 (or 403) answer: what the server wants to be shown. */
  readonly challenge: string | undefined
  constructor(message: string, options: LocalErrorOptions & { status?: number; refused?: boolean; challenge?: string } = {}) {
    super(message, options)
    this.name = 'TransportError'
    this.status = options.status
    this.refused = options.refused === true
    this.challenge = options.challenge
  }
}

/** Nothing came back in time. */
export class TimeoutError extends LocalError {
  readonly code = ClientErrorCode.Timeout
  readonly timeoutMs: number
  constructor(message: string, timeoutMs: number, options: LocalErrorOptions = {}) {
    super(message, options)
    this.name = 'TimeoutError'
    this.timeoutMs = timeoutMs
  }
}

/** The caller cancelled the request; the server was sent `notifications/cancelled`. */
export class CancelledError extends LocalError {
  readonly code = ClientErrorCode.Cancelled
  readonly reason: string
  constructor(reason: string, options: LocalErrorOptions = {}) {
    super(`Request cancelled: ${reason}`, options)
    this.name = 'CancelledError'
    this.reason = reason
  }
}

/** The server sent something the protocol does not allow. */
export class ProtocolError extends LocalError {
  readonly code = ClientErrorCode.Protocol
  constructor(message: string, options: LocalErrorOptions = {}) {
    super(message, options)
    this.name = 'ProtocolError'
  }
}
