/**
 * The session front door, one for every transport (Streamable HTTP, WebSocket, stdio): which way a
 * message goes, the initialize that opens a session, the lookup of an open one, and a session's
 * message dispatched by kind. Transports keep only their framing and how they answer.
 *
 *   message ─► no session named and a 2026-07-28 envelope ─► stateless (no session at all)
 *           ─► initialize ──────────────────────────────────► openSession ─► record │ refusal
 *           ─► else ─► findSession ─► serveSession: request │ notification │ response ─► McpEndpoint
 */
import type { Logger } from 'pino'
import type { RouteLimits } from '../edge/limits.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { RequestSink } from '../protocol/sink.ts'
import type { TraceHeaders } from '../protocol/tracing.ts'
import { isStateless } from '../protocol/stateless/envelope.ts'
import { StoreUnavailableError, type SessionRecord, type SessionStore } from '../store/store.ts'
import { EdgeError, McpError, refusalOf } from '../wire/errors.ts'
import type { Caller } from '../wire/caller.ts'
import type { Incoming, JsonRpcRequest, JsonRpcResponse } from '../wire/jsonrpc.ts'

/** The three ways through the door. */
export type Way = 'stateless' | 'initialize' | 'session'

/**
 * Where a classified message goes. `sessionNamed`: the message belongs to a session (HTTP: it carries
 * Mcp-Session-Id; a channel: it was initialized). `versionHeader`: HTTP's MCP-Protocol-Version.
 */
export function wayOf(incoming: Incoming, body: unknown, sessionNamed: boolean, versionHeader?: string): Way {
  if (!sessionNamed && isStateless(body, versionHeader)) return 'stateless'
  if (incoming.kind === 'request' && incoming.message.method === 'initialize') return 'initialize'
  return 'session'
}

/** What an initialize gave: the new session, or the refusal to answer with. */
export type Opened = { record: SessionRecord; response: JsonRpcResponse; refusal?: undefined } | { refusal: EdgeError }

/**
 * Opens a session for an initialize request, owned by `caller`'s principal; with `limits`, a full
 * route makes room for a caller under its fair share. Bad params, a full route and a store outage are
 * refusals from the error table (the store's own words go to the log only); anything else is a bug
 * and is thrown.
 */
export async function openSession(endpoint: McpEndpoint, request: JsonRpcRequest, caller: Caller, logger: Logger, limits?: RouteLimits): Promise<Opened> {
  try {
    return await endpoint.initialize(request, caller.principal, limits === undefined ? undefined : () => limits.reclaimable(caller, endpoint.route.max_sessions, endpoint.idleTtlMs))
  } catch (error) {
    return { refusal: initializeRefusal(error, logger) }
  }
}

/** What an initialize that failed with `error` answers: a refusal from the error table; a bug is thrown again. */
export function initializeRefusal(error: unknown, logger: Logger): EdgeError {
  if (error instanceof StoreUnavailableError) {
    logger.warn({ err: error, method: 'initialize' }, 'session store unavailable')
    return new EdgeError('MCP_EDGE_STORE_UNAVAILABLE')
  }
  if (error instanceof EdgeError) return error
  if (error instanceof McpError) return refusalOf(error)
  throw error
}

/**
 * The open session `sessionId` of `route`, or undefined when it is unknown, ended or another route's.
 * Synchronous when the store knows it without waiting (the hot path); a promise otherwise.
 */
export function findSession(store: SessionStore, route: string, sessionId: string): SessionRecord | undefined | Promise<SessionRecord | undefined> {
  const known = store.peek(sessionId)
  if (known !== undefined) return known.route === route ? known : undefined
  return store.get(sessionId).then((record) => (record === undefined || record.route !== route ? undefined : record))
}

/**
 * Hands a message of an open session to the endpoint: a request to the method it names (its outcome
 * through `sinkFor(request)`, its handler seeing `caller`, traced under `headers`' parent), a
 * notification, or the client's answer to a server→client request.
 * Synchronous unless the request's method is, or the message is a notification (a promise then).
 */
export function serveSession(
  endpoint: McpEndpoint,
  record: SessionRecord,
  incoming: Incoming,
  sinkFor: (request: JsonRpcRequest) => RequestSink,
  caller: Caller,
  headers?: TraceHeaders,
): Promise<void> | undefined {
  switch (incoming.kind) {
    case 'request':
      return endpoint.handleRequest(record, incoming.message, sinkFor(incoming.message), caller, headers)
    case 'notification':
      return endpoint.handleNotification(record, incoming.message)
    case 'response':
      endpoint.handleResponse(record, incoming.message)
      return undefined
  }
}
