/**
 * The seam between the client's protocol layer and the wire. A transport moves whole JSON-RPC
 * messages and knows nothing of ids, timeouts or methods beyond what its framing needs:
 *
 *   McpClient ─► Protocol ─► Transport.send(message) ──► wire (HTTP POST · WebSocket frame · stdin line)
 *                    ▲
 *                    └────── Transport.onmessage(message) ◄── wire (JSON · SSE event · frame · stdout line)
 *
 * Implementations: `streamable-http.ts`, `websocket.ts`, `stdio.ts`.
 */
import type { JsonRpcMessage, RequestId } from '../wire/jsonrpc.ts'

export interface Transport {
  /** Opens the connection (spawns the process, opens the socket); HTTP has nothing to open. Rejects with TransportError. */
  start(): Promise<void>

  /**
   * Hands one message to the wire. Rejects (TransportError, TimeoutError) when it could not be
   * delivered; for a request, that rejection ends the request. `resultAsSent` (a request's): its
   * result may come back unparsed, as a VerbatimResult (RequestOptions.resultAsSent); a transport
   * that cannot tell ignores it.
   */
  send(message: JsonRpcMessage, resultAsSent?: boolean): Promise<void>

  /** Closes the connection and ends the session where the transport has one (HTTP DELETE); idempotent. */
  close(): Promise<void>

  /**
   * Every message the server sends, in the order the wire delivered it. `relatedId` names the client
   * request whose own stream carried it (an SSE stream answering a POST), when the transport knows.
   */
  onmessage?: (message: JsonRpcMessage, relatedId?: RequestId) => void

  /** Called once when the connection is gone, whether `close()` or the other side ended it. */
  onclose?: () => void

  /**
   * A failure outside any `send()`: an unparseable message, a stream that could not be resumed, a
   * read timeout. When the error names a `requestId` (a TransportError, TimeoutError), that request
   * can no longer be answered and the protocol layer ends it with this error.
   */
  onerror?: (error: Error) => void

  /** Told the negotiated protocol version after initialize (HTTP sends it as MCP-Protocol-Version). */
  setProtocolVersion?(version: string): void

  /**
   * Continues a session that another process (or an earlier connection) initialized: carries `sessionId`
   * from now on and opens what initialize would have opened (HTTP: the standalone GET stream).
   */
  resumeSession?(sessionId: string | undefined): Promise<void>

  /** The session id the server issued, where the transport carries one (HTTP `mcp-session-id`). */
  readonly sessionId?: string | undefined
}

/** The largest message a transport accepts by default (a JSON body, an SSE event), in bytes: 16 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

/** The callbacks of `Transport`, declared once for the transports that extend it. */
export abstract class TransportCallbacks implements Pick<Transport, 'onmessage' | 'onclose' | 'onerror'> {
  onmessage?: (message: JsonRpcMessage, relatedId?: RequestId) => void
  onclose?: () => void
  onerror?: (error: Error) => void
}
