/**
 * What a stdio child's multiplexer (stdio-pool-child.ts) needs of a session, and the handshakes a
 * child makes: `initialize` (2025-era), or for 2026-07-28 requests a `server/discover` that must list
 * that revision (stdio-pool-modern.ts).
 */
import type { JsonRpcMessage, RequestId } from '../wire/jsonrpc.ts'
import type { ClientCapabilities, JsonObject } from '../wire/mcp-types.ts'

/** What the multiplexer needs of a session (the pool's per-session transport). */
export interface PoolSession {
  /**
   * The capabilities the session's client declared in its initialize; a server→client request needs
   * the matching one. Undefined when the session never sent initialize (a client resuming a session
   * kept as data): its client answers for itself.
   */
  readonly capabilities: ClientCapabilities | undefined
  /** The session's client can be asked to sample or elicit (or may be: its capabilities are unknown). */
  readonly canBeAsked: boolean
  /** Requests of this session in flight: the session's id → the child's id. */
  readonly inFlight: Map<RequestId, number>
  /**
   * A message for the session's client; `relatedId` is the session's request it belongs to, when
   * that can be told (a progress notification; a request or log line while that request is the
   * only one in flight), like the stream of a POST tells it over HTTP.
   */
  deliver(message: JsonRpcMessage, relatedId?: RequestId): void
  /**
   * The child is gone; the session's requests in flight fail and its next request takes another child.
   * `child` is the PoolChild that went (typed by identity only, so this file needs nothing of the child's).
   */
  childGone(child: object, reason: string): void
}

/** The handshake of a child for 2026-07-28 requests: no initialize, a `server/discover` that must list that revision. */
export const DISCOVER = 'discover'

/** The envelope of the pool's own 2026-07-28 requests (discover, the liveness probe). */
export const DISCOVER_PARAMS: JsonObject = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } }

/** A child whose discover does not list 2026-07-28: not a failure of the child, an answer about the server. */
export class NotModernError extends Error {
  override readonly name = 'NotModernError'
}

/** The session's one request in flight, if it has exactly one: what a message of the child's then belongs to. */
export function onlyRequest(session: PoolSession): RequestId | undefined {
  if (session.inFlight.size !== 1) return undefined
  return session.inFlight.keys().next().value
}

/**
 * A child's handshake over `ask` (the multiplexer's own requests) and `write`: a discover that must
 * list 2026-07-28 (else NotModernError), or initialize then notifications/initialized. Resolves with
 * what every session is answered from (a discover's result carries protocolVersion 2026-07-28).
 */
export async function handshakeChild(
  handshake: JsonObject | typeof DISCOVER,
  ask: (method: string, params: JsonObject, anyAnswer: boolean) => Promise<JsonObject>,
  write: (message: JsonRpcMessage) => Promise<void>,
): Promise<JsonObject> {
  if (handshake === DISCOVER) {
    const result = await ask('server/discover', DISCOVER_PARAMS, true)
    const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : []
    if (!versions.includes('2026-07-28')) throw new NotModernError('its server/discover does not list 2026-07-28')
    return { ...result, protocolVersion: '2026-07-28' }
  }
  const result = await ask('initialize', handshake, false)
  if (typeof result.protocolVersion !== 'string') throw new Error('its initialize result has no protocolVersion')
  await write({ jsonrpc: '2.0', method: 'notifications/initialized' })
  return result
}
