/**
 * The seam between a transport and the protocol layer for one request: how the protocol sends what
 * belongs to the request (notifications, server→client requests, the response). Each transport
 * implements it: HTTP answers JSON until something is sent before the response, then switches to SSE.
 */
import type { JsonRpcMessage, JsonRpcResponse } from '../wire/jsonrpc.ts'

export interface RequestSink {
  /** Sends a notification or server→client request related to the request, before its response. */
  send(message: JsonRpcMessage): void
  /**
   * Sends the response and ends the request's stream. `httpStatus` is a hint for HTTP while nothing
   * was streamed yet (503 when the store failed); other transports ignore it.
   */
  respond(message: JsonRpcResponse, httpStatus?: number, headers?: Readonly<Record<string, string>>): void
  /** Ends the request without a response (it was cancelled). */
  abandon(): void
  /**
   * Drops the connection but keeps the stream: what follows is kept for a client that resumes with
   * `Last-Event-ID` after `retryMs` (SSE polling). False when the transport cannot do that.
   */
  detach(retryMs: number): boolean
}

/** The stream name of a session's standalone stream in the event log. */
export const STANDALONE_STREAM = 'g'

/** Where the messages of a session that belong to no request go (the HTTP GET stream, a WebSocket). */
export interface SessionOutlet {
  /** Sends a message, logging it for replay first when the transport resumes. */
  send(message: JsonRpcMessage): void
  /** Sends a message already in the event log under `eventId` (logged by whoever produced it). */
  sendLogged(data: string, eventId: string): void
  close(): void
}
