/**
 * What a client can make the gateway hold before it has sent a whole request: the HTTP server's
 * connections. Three bounds, all enforced by the server and its sockets, none by a timer per request:
 *
 *   connection accepted ─► more than max_per_address open from this address? ─► 429, closed
 *   headers not complete header_timeout after the request began ─────────────► 408, closed
 *   body not complete header_timeout + body_timeout after it began ─────────► 408, closed
 *
 * The two timeouts are Node's own `headersTimeout` and `requestTimeout`: the server sweeps its
 * connections every `checkIntervalMs` (a quarter of the shorter timeout, at most 5 s), so a slow
 * client is cut within that much after its deadline. The budget covers the whole request, so a body
 * trickled a byte at a time cannot stretch it (nginx's client_body_timeout, between two reads, can be).
 * A request once received is never cut: a slow tool or a long SSE stream is not a slow client.
 *
 * A refusal here has no request id to echo (the request was not read), so its JSON-RPC error says
 * `id: null`; the status and code come from the error table.
 */
import type { Server, ServerOptions } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from 'pino'
import type { ConnectionsConfig } from '../config/types.ts'
import { EdgeError } from '../wire/errors.ts'
import { errorMessage } from '../wire/jsonrpc.ts'

/** The options the HTTP server is created with (Fastify's `http` and `requestTimeout`). */
export function serverTimeouts(config: ConnectionsConfig): { http: ServerOptions; requestTimeout: number } {
  const headersTimeout = config.header_timeout * 1000
  const requestTimeout = (config.header_timeout + config.body_timeout) * 1000
  return {
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval: checkIntervalMs(config) },
    requestTimeout,
  }
}

/** How often the server looks for connections past their deadline. */
export function checkIntervalMs(config: ConnectionsConfig): number {
  return Math.min(5000, Math.max(50, (Math.min(config.header_timeout, config.body_timeout) * 1000) / 4))
}

/** A whole HTTP response, written on a raw socket before any request was read. */
function rawResponse(error: EdgeError, reason: string): string {
  const body = JSON.stringify(errorMessage(null, error.rpcCode, error.message))
  return `HTTP/1.1 ${error.status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
}

/** Counts connections per client address and refuses those over `max_per_address` (0: no cap). */
export function capConnections(server: Server, config: ConnectionsConfig, logger: Logger): void {
  const max = config.max_per_address
  if (max === 0) return
  const refusal = rawResponse(new EdgeError('MCP_EDGE_TOO_MANY_CONNECTIONS',
    `Too Many Requests: over ${max} connections from this address (connections.max_per_address)`), 'Too Many Requests')
  const open = new Map<string, number>()
  let refusedSinceLog = 0
  let logged = 0
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const count = open.get(address) ?? 0
    if (count >= max) {
      refusedSinceLog++
      // One line per burst (at most one a minute), not one per refused connection.
      if (Date.now() - logged > 60_000) {
        logger.warn({ address, open: count, refused: refusedSinceLog }, 'connections over connections.max_per_address refused')
        logged = Date.now()
        refusedSinceLog = 0
      }
      socket.end(refusal)
      socket.destroySoon()
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

/**
 * Fastify's `clientErrorHandler`: what a client whose request never arrived whole, or could not be
 * parsed, is told (a JSON-RPC error, not Fastify's own body). Timeouts are logged at debug.
 */
export function clientErrorHandler(logger: Logger): (error: Error & { code?: string }, socket: Socket) => void {
  const timeout = rawResponse(new EdgeError('MCP_EDGE_REQUEST_TIMEOUT'), 'Request Timeout')
  const tooLarge = rawResponse(new EdgeError('MCP_EDGE_HEADERS_TOO_LARGE'), 'Request Header Fields Too Large')
  const malformed = rawResponse(new EdgeError('MCP_EDGE_MALFORMED_HTTP'), 'Bad Request')
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const answer = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? timeout : error.code === 'HPE_HEADER_OVERFLOW' ? tooLarge : malformed
    logger.debug({ code: error.code, address: socket.remoteAddress }, 'client error')
    if (socket.writable) socket.end(answer)
    socket.destroySoon()
  }
}
