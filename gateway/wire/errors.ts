/**
 * Every error code mcp-edge produces, in one place.
 *
 * Wire errors are JSON-RPC / MCP codes (`RpcCode`) carried by `McpError`; they become a JSON-RPC
 * error object inside an answer. Everything the gateway refuses or fails with itself is a row of the
 * error table (`EdgeCode`): a stable `MCP_EDGE_*` name, the HTTP status a transport answers with, the
 * JSON-RPC code of the error body, and the default message. An `EdgeError` names its row; every
 * refusal is one (`transport/reply-error.ts` writes it), so no status or code is chosen anywhere else.
 *
 * Adding a refusal is adding a row, then `throw new EdgeError('MCP_EDGE_…', detail?, { headers })`.
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
  /** MCP 2026-07-28: a header disagrees with the body (or is missing). */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: the request needs a client capability its envelope does not declare. */
  MissingCapability: -32021,
  /** MCP 2026-07-28: the envelope names a protocol version the server does not speak. */
  UnsupportedVersion: -32022,
  /** MCP 2025-11-25: a URL elicitation must complete first (a handler throws it). */
  UrlElicitationRequired: -32042,
} as const

/** One row of the error table. */
export interface ErrorRow {
  /** The HTTP status a transport answers with. */
  readonly status: number
  /** The JSON-RPC code of the error body. */
  readonly rpc: number
  /** The message when the thrower gives none. */
  readonly message: string
  /** Response headers the refusal always carries (a thrower may add more). */
  readonly headers?: Readonly<Record<string, string>>
}

const { ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError, ServerError, SessionNotFound } = RpcCode

/**
 * The error table: one row per code. Keep it grouped by status; a test checks that every status
 * and JSON-RPC code in gateway/ comes from here.
 */
export const EdgeCode = {
  // 400: the request itself is wrong.
  MCP_EDGE_PARSE_ERROR: { status: 400, rpc: ParseError, message: 'Parse error' },
  MCP_EDGE_INVALID_REQUEST: { status: 400, rpc: InvalidRequest, message: 'Invalid Request' },
  MCP_EDGE_INVALID_PARAMS: { status: 400, rpc: InvalidParams, message: 'Invalid params' },
  /** A JSON-RPC batch from a session that did not negotiate 2025-03-26 (the one revision with batches), or over `limits.batch_size`. */
  MCP_EDGE_BATCH_REFUSED: { status: 400, rpc: InvalidRequest, message: 'JSON-RPC batches are only for sessions that negotiated 2025-03-26; send one message per POST' },
  MCP_EDGE_BAD_UPGRADE: { status: 400, rpc: InvalidRequest, message: 'Bad Request: expected a WebSocket upgrade' },
  /** A message on a 2024-11-05 HTTP+SSE session before its initialize, or a second initialize. */
  MCP_EDGE_LEGACY_NOT_INITIALIZED: { status: 400, rpc: InvalidRequest, message: 'Bad Request: the first message of an HTTP+SSE session is initialize, and only the first' },
  /** A POST to a 2024-11-05 HTTP+SSE route without `?sessionId=` (the endpoint event gives the URL to POST to). */
  MCP_EDGE_LEGACY_SESSION_REQUIRED: { status: 400, rpc: ServerError, message: 'Bad Request: POST to the URL the stream\'s endpoint event named (it carries ?sessionId=)' },
  MCP_EDGE_SESSION_REQUIRED: { status: 400, rpc: ServerError, message: 'Bad Request: Mcp-Session-Id header is required (initialize first)' },
  MCP_EDGE_BAD_PROTOCOL_VERSION: { status: 400, rpc: ServerError, message: 'Bad Request: unsupported MCP-Protocol-Version' },
  MCP_EDGE_BAD_EVENT_ID: { status: 400, rpc: InvalidParams, message: 'Malformed Last-Event-ID' },
  MCP_EDGE_HEADER_MISMATCH: { status: 400, rpc: RpcCode.HeaderMismatch, message: 'Header mismatch' },
  MCP_EDGE_MISSING_CAPABILITY: { status: 400, rpc: RpcCode.MissingCapability, message: 'Missing required client capability' },
  MCP_EDGE_UNSUPPORTED_VERSION: { status: 400, rpc: RpcCode.UnsupportedVersion, message: 'Unsupported protocol version' },
  /** A server→client request the client cannot take (it did not declare the capability). */
  MCP_EDGE_CLIENT_CAPABILITY_MISSING: { status: 400, rpc: ServerError, message: 'The client did not declare the capability' },
  /** Bytes that are not HTTP/1.1. */
  MCP_EDGE_MALFORMED_HTTP: { status: 400, rpc: ServerError, message: 'Bad Request: malformed HTTP' },
  /** More Host headers than one: which one the allow-list checked would be a guess. */
  MCP_EDGE_DUPLICATE_HOST: { status: 400, rpc: ServerError, message: 'Bad Request: more than one Host header' },
  /** tasks/get, result, update or cancel of a task that expired, never existed, or is another client's. */
  MCP_EDGE_TASK_NOT_FOUND: { status: 400, rpc: InvalidParams, message: 'Unknown task: it expired, never existed, or belongs to another client' },
  /** 2025-11-25 tasks/cancel of a task that already finished. */
  MCP_EDGE_TASK_FINISHED: { status: 400, rpc: InvalidParams, message: 'The task already finished and cannot be cancelled' },
  /** A tool that needs the user's approval (`approval:`), called by a client that cannot ask its user (no form elicitation) on a route whose fallback refuses. */
  MCP_EDGE_APPROVAL_UNAVAILABLE: { status: 400, rpc: RpcCode.MissingCapability, message: "This tool needs the user's approval, and this client cannot ask its user (it did not declare form elicitation); the call did not run" },
  /** A 2026-07-28 retry whose approval ran out (`approval.ttl_s` after it was asked): ask again by calling without requestState. */
  MCP_EDGE_APPROVAL_EXPIRED: { status: 400, rpc: InvalidParams, message: 'The approval expired before the answer came back; call the tool again to be asked again. The call did not run' },
  /** A 2026-07-28 retry whose approval answer was never asked by this gateway for this call, or whose approval was used already. */
  MCP_EDGE_APPROVAL_INVALID: { status: 400, rpc: InvalidParams, message: 'The approval does not belong to this call, or was used already; call the tool again to be asked again. The call did not run' },
  // 403 … 431: the request cannot be served as sent.
  /** No credential, or one that fails verification: sent with a Bearer challenge naming the route's metadata. */
  MCP_EDGE_UNAUTHORIZED: { status: 401, rpc: ServerError, message: 'Unauthorized: this route needs an access token' },
  MCP_EDGE_FORBIDDEN_ORIGIN: { status: 403, rpc: ServerError, message: 'Forbidden: Origin or Host not allowed' },
  /** The admin API without its credential (`admin.token`, or a JWT with `admin.jwt.scope`): sent with a Bearer challenge. */
  MCP_EDGE_ADMIN_UNAUTHORIZED: { status: 401, rpc: ServerError, message: 'Unauthorized: the admin API needs its bearer token or an admin JWT', headers: { 'www-authenticate': 'Bearer realm="mcp-edge-admin"' } },
  /** A change through the admin API (POST /api/reload, the try-it panel) that the config does not allow (`admin.reload`, `admin.try_it`). */
  MCP_EDGE_ADMIN_READ_ONLY: { status: 403, rpc: ServerError, message: 'Forbidden: the admin API is read-only here (admin.reload, admin.try_it)' },
  /** The caller lacks a scope the route or the component needs: sent with error="insufficient_scope" and the scope to ask for. */
  MCP_EDGE_INSUFFICIENT_SCOPE: { status: 403, rpc: ServerError, message: 'Forbidden: insufficient scope' },
  /** The route's access module refused (its own 4xx status replaces this one) or failed (the message names a reference). */
  MCP_EDGE_ACCESS_DENIED: { status: 403, rpc: ServerError, message: 'Forbidden' },
  /** The user declined the call when asked for approval (`approval:`): it did not run. */
  MCP_EDGE_APPROVAL_DECLINED: { status: 403, rpc: ServerError, message: 'The user declined this call; it did not run' },
  /** The user dismissed the approval request without answering: the call did not run. */
  MCP_EDGE_APPROVAL_CANCELLED: { status: 403, rpc: ServerError, message: 'The user dismissed the approval request; the call did not run' },
  /** A route's filter phase withheld a result (over its size cap, or its filter module refused it); sent in the JSON-RPC body of the call's answer (the status is for a stateless POST's log only). */
  MCP_EDGE_RESULT_WITHHELD: { status: 403, rpc: ServerError, message: 'Result withheld by the route\'s filter' },
  /** A path the admin listener does not serve, or a try-it call naming a route that is not configured. */
  MCP_EDGE_ADMIN_NOT_FOUND: { status: 404, rpc: InvalidRequest, message: 'Not Found: the admin API has no such path or route' },
  /** An upstream needs the caller's consent first (per-user OAuth): the data carries the URL elicitation to follow. */
  MCP_EDGE_UPSTREAM_CONSENT_REQUIRED: { status: 403, rpc: RpcCode.UrlElicitationRequired, message: 'The upstream needs your consent first' },
  /** Per-user OAuth's callback: a state that is missing, forged, expired or already used. */
  MCP_EDGE_OAUTH_STATE_INVALID: { status: 400, rpc: InvalidRequest, message: 'This sign-in link is unknown, expired, or was already used. Start again from your client.' },
  /** Per-user OAuth's callback: the authorization server came back without a code (the user denied, or an error). */
  MCP_EDGE_OAUTH_CONSENT_NOT_GIVEN: { status: 400, rpc: InvalidRequest, message: 'The sign-in was not completed.' },
  /** Per-user OAuth's callback: the upstream the consent was for is no longer configured. */
  MCP_EDGE_OAUTH_UPSTREAM_GONE: { status: 404, rpc: InvalidRequest, message: 'The server this sign-in was for is no longer configured.' },
  MCP_EDGE_ROUTE_NOT_FOUND: { status: 404, rpc: InvalidRequest, message: 'Not Found: no MCP route here' },
  MCP_EDGE_SESSION_NOT_FOUND: { status: 404, rpc: SessionNotFound, message: 'Session not found: initialize a new session' },
  MCP_EDGE_METHOD_NOT_FOUND: { status: 404, rpc: MethodNotFound, message: 'Method not found' },
  MCP_EDGE_UNKNOWN_EVENT_ID: { status: 404, rpc: InvalidParams, message: 'Unknown Last-Event-ID: it expired or never existed; open a new stream' },
  MCP_EDGE_METHOD_NOT_ALLOWED: { status: 405, rpc: ServerError, message: 'Method Not Allowed: use POST, GET or DELETE', headers: { allow: 'GET, POST, DELETE' } },
  /** GET and DELETE on the stateless wire: there is no session to stream or end. */
  MCP_EDGE_SESSION_METHOD_NOT_ALLOWED: { status: 405, rpc: MethodNotFound, message: 'Method Not Allowed: this needs a session (stateless clients use POST)', headers: { allow: 'POST' } },
  MCP_EDGE_NOT_ACCEPTABLE: { status: 406, rpc: ServerError, message: 'Not Acceptable: Accept must list application/json and text/event-stream' },
  /** POST /api/reload whose check or load failed: the gateway serves on what it served (`data.problems` says why). */
  MCP_EDGE_ADMIN_RELOAD_FAILED: { status: 409, rpc: ServerError, message: 'Reload refused: the gateway keeps serving the config it served' },
  MCP_EDGE_STREAM_CONFLICT: { status: 409, rpc: ServerError, message: 'Conflict: this session already has a standalone SSE stream open' },
  /** A request whose headers or body did not arrive in time (`connections.header_timeout`, `body_timeout`). */
  MCP_EDGE_REQUEST_TIMEOUT: { status: 408, rpc: ServerError, message: 'Request Timeout: the request did not arrive whole in time (connections.header_timeout, connections.body_timeout)' },
  MCP_EDGE_BODY_TOO_LARGE: { status: 413, rpc: ServerError, message: 'Payload Too Large' },
  /** `ctx.session.state` or a session's own catalogue would grow over `limits.session_state` / `limits.session_catalogue`. */
  MCP_EDGE_SESSION_DATA_TOO_LARGE: { status: 413, rpc: ServerError, message: 'Session data too large (limits.session_state, limits.session_catalogue)' },
  MCP_EDGE_UNSUPPORTED_MEDIA_TYPE: { status: 415, rpc: ServerError, message: 'Unsupported Media Type: Content-Type must be application/json' },
  /** A session holds `max_followers` resumed streams on this worker already. */
  MCP_EDGE_TOO_MANY_FOLLOWERS: { status: 429, rpc: ServerError, message: 'Too many resumed streams on this session; close one first' },
  /** More connections from one client address than `connections.max_per_address`. */
  MCP_EDGE_TOO_MANY_CONNECTIONS: { status: 429, rpc: ServerError, message: 'Too Many Requests: too many connections from this address (connections.max_per_address)' },
  /** Over a transport-level rate rule (`limits.rate` without `tool`); sent with Retry-After. */
  MCP_EDGE_RATE_LIMITED: { status: 429, rpc: ServerError, message: 'Too Many Requests: over a rate limit (limits.rate); retry later' },
  /** A new session over `limits.sessions_per_principal`. */
  MCP_EDGE_TOO_MANY_PRINCIPAL_SESSIONS: { status: 429, rpc: ServerError, message: 'Too Many Requests: this client has too many sessions on this route (limits.sessions_per_principal); end one first', headers: { 'retry-after': '10' } },
  /** A request over `limits.concurrent_requests_per_session`. */
  MCP_EDGE_TOO_MANY_CONCURRENT_REQUESTS: { status: 429, rpc: ServerError, message: 'Too Many Requests: too many requests in flight on this session (limits.concurrent_requests_per_session)' },
  /** A `subscriptions/listen` stream over `limits.listen_streams_per_client` (per worker). */
  MCP_EDGE_TOO_MANY_LISTEN_STREAMS: { status: 429, rpc: ServerError, message: 'Too Many Requests: this client holds too many subscriptions/listen streams (limits.listen_streams_per_client)', headers: { 'retry-after': '5' } },
  /** A 2024-11-05 HTTP+SSE stream over `limits.legacy_sse_streams_per_client` (per worker). */
  MCP_EDGE_TOO_MANY_LEGACY_STREAMS: { status: 429, rpc: ServerError, message: 'Too Many Requests: this client holds too many HTTP+SSE streams (limits.legacy_sse_streams_per_client); close one first', headers: { 'retry-after': '5' } },
  /** A new task over `tasks.max_per_owner` (tasks kept until their TTL count). */
  MCP_EDGE_TOO_MANY_TASKS: { status: 429, rpc: ServerError, message: 'Too many tasks for this client (tasks.max_per_owner); wait for one to expire' },
  /** More try-it calls at once than the admin listener runs (TRY_IT_CONCURRENCY). */
  MCP_EDGE_TRY_IT_BUSY: { status: 429, rpc: ServerError, message: 'Too Many Requests: try-it calls are running; retry' },
  /** Request headers over Node's limit. */
  MCP_EDGE_HEADERS_TOO_LARGE: { status: 431, rpc: ServerError, message: 'Request Header Fields Too Large' },
  /** The request that asked the client something was cancelled (nginx's 499: the client went away). */
  MCP_EDGE_REQUEST_CANCELLED: { status: 499, rpc: ServerError, message: 'Request cancelled' },
  // 5xx: the gateway cannot serve it now.
  MCP_EDGE_INTERNAL: { status: 500, rpc: InternalError, message: 'Internal error' },
  MCP_EDGE_CONFIG_INVALID: { status: 500, rpc: InternalError, message: 'Invalid configuration' },
  MCP_EDGE_HANDLER_INVALID: { status: 500, rpc: InternalError, message: 'Invalid handler module' },
  /** A route's phase module (`phases:`) is missing, fails to load, or does not export a function. */
  MCP_EDGE_PHASE_INVALID: { status: 500, rpc: InternalError, message: 'Invalid phase module' },
  /** A route's rewrite module threw, rejected or answered something else than rules (logged with the reference). */
  MCP_EDGE_PHASE_FAILED: { status: 500, rpc: InternalError, message: 'The route\'s rewrite phase failed' },
  /** A task's result over `tasks.max_result_bytes`: the task fails with this instead of keeping it. */
  MCP_EDGE_TASK_RESULT_TOO_LARGE: { status: 500, rpc: InternalError, message: 'The task result is too large to keep (tasks.max_result_bytes)' },
  /** The worker running a task stopped beating for `producer_timeout`: the task fails with this. */
  MCP_EDGE_TASK_WORKER_GONE: { status: 503, rpc: InternalError, message: 'The worker running this task stopped before finishing it; call the tool again' },
  /** A run-time registration of a callback setup did not declare: other workers could not serve it. */
  MCP_EDGE_UNDECLARED_COMPONENT: { status: 500, rpc: InternalError, message: 'A component registered at run time must be declared at setup, so that every worker has its callback' },
  /** The try-it call reached the route and failed there (its error, as a client saw it, in the message). */
  MCP_EDGE_TRY_IT_FAILED: { status: 502, rpc: ServerError, message: 'The call through the route failed' },
  /** Under the cluster, no worker answered the admin listener in time. */
  MCP_EDGE_ADMIN_NO_WORKER: { status: 503, rpc: ServerError, message: 'Service Unavailable: no worker answered the admin API' },
  MCP_EDGE_TOO_MANY_SESSIONS: { status: 503, rpc: ServerError, message: 'Too many sessions; retry later', headers: { 'retry-after': '10' } },
  /** One principal's sessions hold `store.session_bytes_per_principal` of data in the memory store (or cluster primary). */
  MCP_EDGE_PRINCIPAL_SESSION_DATA_FULL: { status: 429, rpc: ServerError, message: "Too Many Requests: this client's sessions hold as much data as one client may (store.session_bytes_per_principal); end a session first", headers: { 'retry-after': '10' } },
  /** The memory store (or cluster primary) holds `store.session_bytes_total` of sessions' own data. */
  MCP_EDGE_SESSION_DATA_FULL: { status: 503, rpc: ServerError, message: 'Service Unavailable: the sessions hold as much data as the gateway keeps (store.session_bytes_total); retry later', headers: { 'retry-after': '10' } },
  /** The process holds `connections.max_total` connections (by default 80 % of its open-file limit). */
  MCP_EDGE_CONNECTIONS_FULL: { status: 503, rpc: ServerError, message: 'Service Unavailable: the gateway holds as many connections as it may (connections.max_total); retry later', headers: { 'retry-after': '5' } },
  /** A 2024-11-05 HTTP+SSE stream over the route's `limits.legacy_sse_streams` (per worker). */
  MCP_EDGE_LEGACY_STREAMS_FULL: { status: 503, rpc: ServerError, message: 'Service Unavailable: this route holds too many HTTP+SSE streams (limits.legacy_sse_streams); retry later', headers: { 'retry-after': '5' } },
  /** A `subscriptions/listen` stream over the route's `limits.listen_streams` (per worker). */
  MCP_EDGE_LISTEN_STREAMS_FULL: { status: 503, rpc: ServerError, message: 'Service Unavailable: this route holds too many subscriptions/listen streams (limits.listen_streams); retry later', headers: { 'retry-after': '5' } },
  /** A stateless client's call would wait for its retry, but `upstreams[].max_parked` calls wait on this worker already. */
  MCP_EDGE_TOO_MANY_PARKED: { status: 503, rpc: ServerError, message: 'Too many calls wait for their clients on this worker (upstreams[].max_parked); retry later' },
  /** The session store cannot be reached; the backend's own words ("redis: Command timed out", a host) go to the log only. */
  MCP_EDGE_STORE_UNAVAILABLE: { status: 503, rpc: ServerError, message: 'Session store unavailable', headers: { 'retry-after': '5' } },
  /** A change to shared session or route data lost the compare-and-set race too many times in a row. */
  MCP_EDGE_STORE_CONFLICT: { status: 503, rpc: ServerError, message: 'Too many concurrent changes to the same data; retry' },
  /** The authorization server's keys (JWKS, metadata) cannot be fetched, so no token can be checked. */
  MCP_EDGE_AUTH_UNAVAILABLE: { status: 503, rpc: ServerError, message: 'Service Unavailable: access tokens cannot be checked now; retry later' },
  /** Per-user OAuth's callback: the code exchange with the authorization server failed (the message names the upstream and why). */
  MCP_EDGE_OAUTH_EXCHANGE_FAILED: { status: 502, rpc: ServerError, message: 'The sign-in failed at the authorization server.' },
  /** The client answered a server→client request (sampling, elicitation, roots) with a malformed result. */
  MCP_EDGE_CLIENT_ANSWER_INVALID: { status: 502, rpc: ServerError, message: "The client's answer is malformed" },
  /** The gateway could not get or use its credential for an upstream (the authorization server's `error` code in the message and data; never a secret). */
  MCP_EDGE_UPSTREAM_CREDENTIAL_FAILED: { status: 502, rpc: ServerError, message: 'The gateway could not authenticate to the upstream' },
  MCP_EDGE_CLIENT_TIMEOUT: { status: 504, rpc: ServerError, message: 'The client did not answer in time' },
} as const satisfies Record<`MCP_EDGE_${string}`, ErrorRow>
export type EdgeCodeName = keyof typeof EdgeCode

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
 * The JSON-RPC error a client answered a server→client request with (elicitation, sampling, roots):
 * the client's own words, so a tool that lets it through shows them as written.
 */
export class ClientAnswerError extends Error {
  readonly code: number
  readonly data: unknown
  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.name = 'ClientAnswerError'
    this.code = code
    this.data = data
  }
}

/** What an EdgeError may carry besides its row. */
export interface EdgeErrorOptions {
  /** The error body's `data`. */
  data?: unknown
  /** Response headers beyond the row's (WWW-Authenticate, Retry-After, …). */
  headers?: Readonly<Record<string, string>>
  cause?: unknown
  /** Only for a status another layer chose and the gateway passes on (Fastify's own 4xx). */
  status?: number
  /** Only for a wire error refused at the HTTP level with its own code (see `refusalOf`). */
  rpc?: number
}

/** A gateway-side failure or refusal, named by its row of the error table. */
export class EdgeError extends Error {
  readonly code: EdgeCodeName
  /** The HTTP status a transport answers with. */
  readonly status: number
  /** The JSON-RPC code of the error body. */
  readonly rpcCode: number
  readonly data: unknown
  /** Response headers: the row's, then the thrower's. */
  readonly headers: Readonly<Record<string, string>> | undefined
  constructor(code: EdgeCodeName, message?: string, options: EdgeErrorOptions = {}) {
    const row: ErrorRow = EdgeCode[code]
    super(message ?? row.message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'EdgeError'
    this.code = code
    this.status = options.status ?? row.status
    this.rpcCode = options.rpc ?? row.rpc
    this.data = options.data
    this.headers = row.headers === undefined ? options.headers : options.headers === undefined ? row.headers : { ...row.headers, ...options.headers }
  }
}

/** The rows a wire error refused at the HTTP level (a bad body, bad params, a 2026-07-28 envelope) travels with. */
const REFUSAL_BY_RPC: ReadonlyMap<number, EdgeCodeName> = new Map<number, EdgeCodeName>([
  [ParseError, 'MCP_EDGE_PARSE_ERROR'],
  [InvalidRequest, 'MCP_EDGE_INVALID_REQUEST'],
  [InvalidParams, 'MCP_EDGE_INVALID_PARAMS'],
  [RpcCode.HeaderMismatch, 'MCP_EDGE_HEADER_MISMATCH'],
  [RpcCode.MissingCapability, 'MCP_EDGE_MISSING_CAPABILITY'],
  [RpcCode.UnsupportedVersion, 'MCP_EDGE_UNSUPPORTED_VERSION'],
])

/**
 * A wire error that refuses a whole HTTP request (the body is not JSON-RPC, initialize's params are
 * wrong): its row by JSON-RPC code, keeping its message and data. A code without a row is refused
 * as an invalid request, with its own code.
 */
export function refusalOf(error: McpError): EdgeError {
  const row = REFUSAL_BY_RPC.get(error.code)
  if (row !== undefined) return new EdgeError(row, error.message, { data: error.data })
  return new EdgeError('MCP_EDGE_INVALID_REQUEST', error.message, { data: error.data, rpc: error.code })
}
