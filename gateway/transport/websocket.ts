/**
 * The WebSocket transport of a route. Not in the MCP spec: it follows the TS SDK 1.x client
 * (subprotocol `mcp`, one JSON-RPC message per text frame) and lua-resty-mcp. It shares the route's
 * path with Streamable HTTP; a router constraint sends upgrade requests here, so a plain GET still
 * reaches the SSE stream:
 *
 *   GET /mcp ── Upgrade: websocket? ── no ──► Streamable HTTP (SSE GET)
 *                     │ yes
 *                     ▼
 *   Origin/Host (403) → subprotocol offered but not `mcp` (400) → 101 → WebSocketConnection
 *
 *   an upgrade anywhere else (a route without the websocket transport) ─► 404
 *
 * Refusals are HTTP answers with a JSON-RPC error body, before the handshake: a client learns why
 * (a browser only sees the connection fail, as it would for any refused handshake).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { Logger } from 'pino'
import type { RouteConfig } from '../config/types.ts'
import { callerOf } from '../edge/access-hook.ts'
import { refusedUnread } from '../events/refused-call.ts'
import { hasDuplicateHost, OriginPolicy } from '../edge/origin-check.ts'
import { EdgeError } from '../wire/errors.ts'
import type { RouteLimits } from '../edge/limits.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { ChannelLimits } from './channel-limits.ts'
import { replyError } from './reply-error.ts'
import { WebSocketConnection } from './websocket-connection.ts'

/** The only subprotocol this transport speaks. */
export const SUBPROTOCOL = 'mcp'

const CONSTRAINT = 'mcpUpgrade'

/** Marks this transport's routes in their Fastify route config. */
interface WebSocketRouteConfig { mcpWebSocket?: true }

/** The open connections of every WebSocket route of one app, closed when the app closes. */
export interface WebSocketHub {
  readonly connections: Set<WebSocketConnection>
}

/** The test Node applies before emitting 'upgrade', narrowed to WebSocket. */
function isWebSocketUpgrade(request: IncomingMessage): boolean {
  const { connection, upgrade } = request.headers
  return upgrade?.toLowerCase() === 'websocket' && connection !== undefined && /(^|,)\s*upgrade\s*(,|$)/i.test(connection)
}

/** Derives `websocket` for upgrade requests; other requests match the path's unconstrained routes. */
const upgradeConstraint = {
  name: CONSTRAINT,
  storage() {
    const handlers = new Map<string, unknown>()
    return {
      get: (value: string) => (handlers.get(value) ?? null) as never,
      set: (value: string, handler: unknown) => void handlers.set(value, handler),
    }
  },
  deriveConstraint: (request: IncomingMessage) => (isWebSocketUpgrade(request) ? 'websocket' : undefined) as string,
}

/**
 * Installs WebSocket support on the app, before any route: `@fastify/websocket` (its message limit
 * is the largest of the routes'; each connection checks its own route's) and the upgrade constraint.
 * Undefined when no route lists the websocket transport.
 */
export async function registerWebSocketSupport(app: FastifyInstance, routes: readonly RouteConfig[], logger: Logger): Promise<WebSocketHub | undefined> {
  const sizes = routes.filter((route) => route.transports.includes('websocket')).map((route) => route.websocket.max_message_size)
  if (sizes.length === 0) return undefined
  // Imported only for a route that serves WebSocket: the plugin and its stream helpers are ~25 modules.
  const { default: websocketPlugin } = await import('@fastify/websocket')
  const hub: WebSocketHub = { connections: new Set() }
  app.addConstraintStrategy(upgradeConstraint)
  await app.register(websocketPlugin, {
    options: {
      maxPayload: Math.max(...sizes),
      handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
    },
    // ws has already closed the socket with the right code for protocol errors (1002, 1007, 1009).
    errorHandler: (error, socket, request) => {
      logger.debug({ err: error, reqId: request.id }, 'websocket error')
      if (socket.readyState === socket.OPEN) socket.terminate()
    },
    preClose: async () => {
      await Promise.all([...hub.connections].map((connection) => connection.shutdown()))
      app.websocketServer.close()
    },
  })
  // The plugin would accept an upgrade on any other path and close it at once: refuse it plainly.
  // A callback hook: it runs on every HTTP request too, where a promise would be pure cost.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.ws && (request.routeOptions.config as WebSocketRouteConfig).mcpWebSocket !== true) {
      replyError(reply, new EdgeError('MCP_EDGE_ROUTE_NOT_FOUND', `Not Found: no WebSocket endpoint at ${request.url}`))
      return
    }
    done()
  })
  return hub
}

function offeredProtocols(request: FastifyRequest): string[] {
  const header = request.headers['sec-websocket-protocol']
  if (header === undefined) return []
  return header.split(',').map((name) => name.trim()).filter((name) => name !== '')
}

/**
 * Serves the route's WebSocket endpoint on its location; needs `registerWebSocketSupport` first.
 * `routeLimits`: the route's rate limits and quotas, counted per message as on HTTP.
 */
export function registerWebSocket(app: FastifyInstance, endpoint: McpEndpoint, hub: WebSocketHub, routeLimits?: RouteLimits): void {
  const { route, logger } = endpoint
  const policy = new OriginPolicy(route.allowed_origins)
  const limits = {
    maxMessageSize: route.websocket.max_message_size,
    sendBuffer: { maxBytes: route.send_buffer.max_bytes, maxMessages: route.send_buffer.max_messages },
    pingIntervalMs: route.websocket.ping_interval * 1000,
    initializeTimeoutMs: route.websocket.initialize_timeout * 1000,
    idleTimeoutMs: route.websocket.idle_timeout * 1000,
  }
  const connectionLogger = logger.child({ transport: 'websocket' })

  app.route({
    method: 'GET',
    url: route.location,
    constraints: { [CONSTRAINT]: 'websocket' },
    exposeHeadRoute: false,
    config: { mcpWebSocket: true } satisfies WebSocketRouteConfig,
    onRequest: async (request, reply) => {
      // Refused before the upgrade: the audit record's line names the rule (no method is known yet).
      const origin = request.headers.origin
      const refused = hasDuplicateHost(request.raw.rawHeaders) ? new EdgeError('MCP_EDGE_DUPLICATE_HOST')
        : !policy.allows(request.headers.host, Array.isArray(origin) ? origin[0] : origin) ? new EdgeError('MCP_EDGE_FORBIDDEN_ORIGIN') : undefined
      if (refused !== undefined) {
        refusedUnread(endpoint.calls, request.headers, 'origin', refused.message)
        return replyError(reply, refused)
      }
      const offered = offeredProtocols(request)
      if (offered.length > 0 && !offered.includes(SUBPROTOCOL)) {
        return replyError(reply, new EdgeError('MCP_EDGE_BAD_UPGRADE',
          `Bad Request: this endpoint speaks the WebSocket subprotocol "${SUBPROTOCOL}"; the client offered ${offered.join(', ')}`))
      }
    },
    // Reached only by a request that looked like an upgrade but was not handed over as one.
    handler: async (_request, reply) => replyError(reply, new EdgeError('MCP_EDGE_BAD_UPGRADE')),
    wsHandler: (socket, request) => {
      const caller = callerOf(request)
      const channelLimits = routeLimits === undefined ? undefined : new ChannelLimits(routeLimits, caller, endpoint.route.catalogue === 'search')
      const connection = new WebSocketConnection(socket, endpoint, limits, connectionLogger, caller, channelLimits)
      hub.connections.add(connection)
      void connection.ended.then(() => hub.connections.delete(connection))
      connectionLogger.info('websocket opened')
    },
  })
}
