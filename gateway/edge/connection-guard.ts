/**
 * What a client can make the gateway hold before it has sent a whole request: the HTTP server's
 * connections. Four bounds, all enforced by the server and its sockets, none by a timer per request:
 *
 *   connection accepted ─► max_total open in this process already? ──────────► 503 + Retry-After, closed (logged)
 *                       ─► more than max_per_address open from this address? ─► 429, closed
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
import { readFileSync } from 'node:fs'
import type { Server, ServerOptions } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from 'pino'
import type { ConnectionsConfig } from '../config/types.ts'
import { addressKey } from '../wire/caller.ts'
import { EdgeError } from '../wire/errors.ts'
import { errorMessage } from '../wire/jsonrpc.ts'

/** The options the HTTP server is created with (Fastify's `http` and `requestTimeout`). */
export function serverTimeouts(config: ConnectionsConfig): { http: ServerOptions; requestTimeout: number; keepAliveTimeout: number } {
  const headersTimeout = config.header_timeout * 1000
  const requestTimeout = (config.header_timeout + config.body_timeout) * 1000
  // Node's default is 5 s: a balancer keeping its upstream connections 60 s (nginx, ALB) then sends
  // a request on one the gateway is closing, and answers 502. Longer here, the balancer closes first.
  const keepAliveTimeout = config.keepalive_timeout * 1000
  return {
    http: { headersTimeout, requestTimeout, keepAliveTimeout, connectionsCheckingInterval: checkIntervalMs(config) },
    requestTimeout,
    keepAliveTimeout,
  }
}

/** How often the server looks for connections past their deadline. */
export function checkIntervalMs(config: ConnectionsConfig): number {
  return Math.min(5000, Math.max(50, (Math.min(config.header_timeout, config.body_timeout) * 1000) / 4))
}

/** A whole HTTP response, written on a raw socket before any request was read. */
function rawResponse(error: EdgeError, reason: string): string {
  const body = JSON.stringify(errorMessage(null, error.rpcCode, error.message))
  const extra = Object.entries(error.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  return `HTTP/1.1 ${error.status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}connection: close\r\n\r\n${body}`
}

/**
 * The soft limit on this process's open files (`ulimit -n`), read from /proc/self/limits; undefined
 * where it cannot be read (not Linux) or is unlimited.
 */
export function fileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    return line === null ? undefined : Number(line[1])
  } catch {
    return undefined
  }
}

/** The share of the file limit client connections may take; the rest is the store's, upstreams', logs' and handlers'. */
const CONNECTION_SHARE = 0.8
/** Without `max_per_address`, one address may take this share of `max_total` (at most DEFAULT_PER_ADDRESS). */
const ADDRESSES_TO_FILL = 16
const DEFAULT_PER_ADDRESS = 1024

/**
 * The caps a server enforces (0: none): `max_total` or 80 % of the file limit, so the gateway refuses
 * connections before accept() fails for want of a descriptor (which a client sees as a hang, and the
 * gateway never logs); `max_per_address` or a sixteenth of that (at most 1024), so a few addresses
 * cannot take them all.
 */
export function connectionCaps(config: ConnectionsConfig, files: number | undefined): { perAddress: number; total: number } {
  const total = config.max_total ?? (files === undefined ? 0 : Math.floor(files * CONNECTION_SHARE))
  const perAddress = config.max_per_address ?? (total === 0 ? DEFAULT_PER_ADDRESS : Math.max(1, Math.min(DEFAULT_PER_ADDRESS, Math.floor(total / ADDRESSES_TO_FILL))))
  return { perAddress, total }
}

/** Logs a refusal once per burst (at most one line a minute), with how many were refused since the last line. */
function burstLogger(logger: Logger, message: string): (fields: Record<string, unknown>) => void {
  let refused = 0
  let logged = 0
  return (fields) => {
    refused++
    if (Date.now() - logged <= 60_000) return
    logger.warn({ ...fields, refused }, message)
    logged = Date.now()
    refused = 0
  }
}

/** Counts connections in all and per client address, and refuses those over the caps (`connectionCaps`). */
export function capConnections(server: Server, config: ConnectionsConfig, logger: Logger): void {
  const files = fileLimit()
  const { perAddress, total } = connectionCaps(config, files)
  logger.debug({ max_per_address: perAddress, max_total: total, file_limit: files ?? 'unknown' }, 'connection caps')
  if (perAddress === 0 && total === 0) return
  const tooMany = rawResponse(new EdgeError('MCP_EDGE_TOO_MANY_CONNECTIONS',
    `Too Many Requests: over ${perAddress} connections from this address (connections.max_per_address)`), 'Too Many Requests')
  const full = rawResponse(new EdgeError('MCP_EDGE_CONNECTIONS_FULL'), 'Service Unavailable')
  const logTooMany = burstLogger(logger, 'connections over connections.max_per_address refused')
  const logFull = burstLogger(logger, 'connections refused: the gateway holds connections.max_total (near its open-file limit)')
  const open = new Map<string, number>()
  let openInAll = 0
  const refuse = (socket: Socket, answer: string): void => {
    socket.end(answer)
    socket.destroySoon()
  }
  server.on('connection', (socket: Socket) => {
    const address = addressKey(socket.remoteAddress ?? '')
    if (total > 0 && openInAll >= total) {
      logFull({ address, open: openInAll, max_total: total, file_limit: files })
      return refuse(socket, full)
    }
    const count = open.get(address) ?? 0
    if (perAddress > 0 && count >= perAddress) {
      logTooMany({ address, open: count })
      return refuse(socket, tooMany)
    }
    open.set(address, count + 1)
    openInAll++
    socket.once('close', () => {
      openInAll--
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
