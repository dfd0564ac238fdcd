/**
 * Every error code mcp-edge produces, in one place.
 *
 * Wire errors are JSON-RPC / MCP codes carried by `McpError`; they become a JSON-RPC error object.
 * Local errors carry a stable `MCP_EDGE_*` code and an HTTP status (`EdgeError`): configuration,
 * handler loading and transport-level refusals.
 */

/** JSON-RPC and MCP error codes sent on the wire. */
export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP 2025-11-25: resources/read of an unknown URI. */
  ResourceNotFound: -32002,
  /**
   * Implementation-defined server error: what the transport refuses with (bad headers, forbidden
   * origin, store unavailable, too many sessions). The HTTP status says which; the official SDK
   * sends the same code for the same refusals.
   */
  ServerError: -32000,
  /** The session id is unknown or ended (HTTP 404): initialize a new session. */
  SessionNotFound: -32001,
  /** MCP 2025-11-25: a URL elicitation must complete first. */
  UrlElicitationRequired: -32042,
} as const

/** An error that reaches the client as a JSON-RPC error object. */
export class McpError extends Error {
  readonly code: number
  readonly data: unknown
  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.name = 'McpError'
    this.code = code
    this.data = data
  }
}

/**
 * What a client is told when the session store cannot be reached (HTTP 503, -32000). The backend's own
 * words ("redis: Command timed out", a host name) go to the log only.
 */
export const STORE_UNAVAILABLE_MESSAGE = 'Session store unavailable'

/** Local error codes with the HTTP status they map to when they reach a transport. */
export const EdgeCode = {
  MCP_EDGE_CONFIG_INVALID: 500,
  MCP_EDGE_HANDLER_INVALID: 500,
  MCP_EDGE_FORBIDDEN_ORIGIN: 403,
  MCP_EDGE_NOT_ACCEPTABLE: 406,
  MCP_EDGE_UNSUPPORTED_MEDIA_TYPE: 415,
  MCP_EDGE_SESSION_REQUIRED: 400,
  MCP_EDGE_SESSION_NOT_FOUND: 404,
  MCP_EDGE_BAD_PROTOCOL_VERSION: 400,
  MCP_EDGE_BODY_TOO_LARGE: 413,
  MCP_EDGE_TOO_MANY_SESSIONS: 503,
  MCP_EDGE_METHOD_NOT_ALLOWED: 405,
  MCP_EDGE_STORE_UNAVAILABLE: 503,
  MCP_EDGE_CLIENT_CAPABILITY_MISSING: 400,
  MCP_EDGE_CLIENT_TIMEOUT: 504,
  MCP_EDGE_REQUEST_CANCELLED: 499,
  /** A session holds `max_followers` resumed streams on this worker already. */
  MCP_EDGE_TOO_MANY_FOLLOWERS: 429,
  /** More connections from one client address than `connections.max_per_address`. */
  MCP_EDGE_TOO_MANY_CONNECTIONS: 429,
  /** A request whose headers or body did not arrive in time (`connections.header_timeout`, `body_timeout`). */
  MCP_EDGE_REQUEST_TIMEOUT: 408,
  /** Request headers over Node's limit. */
  MCP_EDGE_HEADERS_TOO_LARGE: 431,
  /** Bytes that are not HTTP/1.1. */
  MCP_EDGE_MALFORMED_HTTP: 400,
} as const
export type EdgeCodeName = keyof typeof EdgeCode

/** A gateway-side failure with a stable code; `status` is the HTTP status a transport answers with. */
export class EdgeError extends Error {
  readonly code: EdgeCodeName
  readonly status: number
  constructor(code: EdgeCodeName, message: string) {
    super(message)
    this.name = 'EdgeError'
    this.code = code
    this.status = EdgeCode[code]
  }
}
