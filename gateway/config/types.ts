/**
 * The validated, defaulted configuration. `load.ts` turns a YAML file into this; everything after
 * it trusts these shapes. Durations are in seconds as in the YAML; paths are absolute.
 */
import type { Icon, JsonObject } from '../wire/mcp-types.ts'
import type { TokenEncryptionConfig, UpstreamConfig, UpstreamIdentityConfig } from './upstream-types.ts'

export type TransportName = 'streamable_http' | 'websocket' | 'sse'

export interface CapabilitiesConfig {
  logging: boolean
  completions: boolean
  prompts: { list_changed: boolean } | false
  resources: { subscribe: boolean; list_changed: boolean } | false
  tools: { list_changed: boolean } | false
}

/** One rate rule: `limit` requests per `window` seconds per principal (`principal`) or client address (`ip`). */
export interface RateRule {
  key: 'principal' | 'ip'
  /** A glob over tool names: only tools/call of those count (an isError answer); absent, every request (HTTP 429). */
  tool?: string
  limit: number
  window: number
}

/** Rate limits and quotas of a route (YAML: the `rate`, `sessions_per_principal` and `concurrent_requests_per_session` keys of `limits`); 0 switches a quota off. */
export interface QuotasConfig {
  rate: RateRule[]
  /** Live sessions per principal (per client address on an open route). */
  sessions_per_principal: number
  /** Requests of one session in flight at once, across every worker and host. */
  concurrent_requests_per_session: number
}

export type * from './upstream-types.ts'

/** How a proxy route names and filters upstream components. */
export interface ProxyNaming {
  prefix: 'auto' | 'always' | 'never'
  separator: string
  tools: { allow?: string[]; deny: string[]; rename: Record<string, string> }
}

export interface RouteConfig extends ProxyNaming {
  /** URL path, starting with `/`. Unique across routes. */
  location: string
  /** Absolute path of the handler module (resolved against the config file's folder); none on a pure proxy route. */
  handler: string | undefined
  /** The upstream servers of a proxy route; empty for a route served by its handler alone. */
  upstreams: UpstreamConfig[]
  transports: TransportName[]
  server: {
    name: string
    version: string
    title?: string
    description?: string
    website_url?: string
    icons?: Icon[]
    instructions?: string
  }
  capabilities: CapabilitiesConfig
  /** Page sizes per list; 0 switches pagination off. */
  pagination: { tools: number; prompts: number; resources: number }
  resumability: boolean
  /** Seconds without a request before a session ends. */
  longest_standby: number
  /** Seconds to wait for a client's answer to a server→client request. */
  read_timeout: number
  /** Seconds without a sign of life from a stream's producing worker before a follower gives up. */
  producer_timeout: number
  /**
   * Tool calls as tasks: whether the route offers them, the TTL a task gets unless the client asks for
   * less, the most it may ask for, the poll interval it is told (seconds), the largest result kept
   * (bytes), and how many tasks one owner (a session, a principal) may hold at once.
   */
  tasks: { enabled: boolean; ttl: number; max_ttl: number; poll_interval: number; max_result_bytes: number; max_per_owner: number }
  /** Allowed Origin/Host values (`http://host:port`, `host:port` or `host`); loopback only when empty. */
  allowed_origins: string[]
  max_sessions: number
  /** What one SSE stream or WebSocket may hold unsent for a client that does not read; over it the connection is cut. */
  send_buffer: { max_bytes: number; max_messages: number }
  /** Resumed request streams (GET + Last-Event-ID) one session may hold open on one worker. */
  max_followers: number
  /**
   * The WebSocket transport: seconds between pings (a peer that misses a pong is dropped), largest
   * message in bytes, seconds a connection has to initialize, seconds without a client message before it is closed.
   */
  websocket: { ping_interval: number; max_message_size: number; initialize_timeout: number; idle_timeout: number }
  /** A proxy route's shared list cache (upstream/list-cache.ts); false: off. Seconds. */
  list_cache: ListCacheConfig | false
  /** Who shares a cached tool result: one entry per principal (private) or one for all (public). */
  result_cache: { scope: 'public' | 'private' }
  /** Caching hints sent with 2026-07-28 discover, list and read results. */
  cache: { ttl_ms: number; scope: 'public' | 'private' }
  /** Anything the handler wants from the config; reaches it as `server.options`. */
  options: JsonObject
  /** The route's phase modules (absolute paths); see gateway/phases/. */
  phases: { rewrite?: string; filter?: string; log?: string }
  /** The built-in rewrite phase (gateway/phases/rewrite-rules.ts); undefined: none. */
  rewrite: RewriteConfig | undefined
  /** The audit record of this route's calls carries their arguments, not only their digest. */
  audit_arguments: boolean
  /** The built-in filter (gateway/phases/builtin-filter.ts); undefined: none. */
  filter: FilterConfig | undefined
  /** Human approval of destructive tools (gateway/phases/approval-gate.ts); undefined: no tool needs it. */
  approval: ApprovalConfig | undefined
  /** Access control (the gateway's `auth` unless the route sets its own); undefined: an open route. */
  auth: AuthConfig | undefined
  /** Scopes each component needs (the gateway's `scopes` unless the route sets its own). */
  scopes: ScopesConfig
  /** The gateway's `limits`, the same object on every route, so endpoints and transports find them at hand. */
  /** Rate limits and quotas: the route's own `limits` keys, else the gateway's, else the defaults. */
  quotas: QuotasConfig
  limits: LimitsConfig
  /** `full`: tools/list lists every tool; `search`: a few meta-tools find, describe and call them (docs/tool-search.md). */
  catalogue: 'full' | 'search'
  /** Bounds of tool search: default and most hits, longest query, tools a session may load, indexes kept per worker. */
  search: SearchConfig
  /** A virtual route's sources (docs/tool-search.md, virtual servers); empty on every other route. */
  include: IncludeConfig[]
}

/** Bounds of a route's tool search. */
export interface SearchConfig {
  results: number
  max_results: number
  max_query: number
  max_loaded: number
  indexes: number
}

/** One source of a virtual route: a route's handler tools, or one upstream of a proxy route, chosen by name or glob. */
export interface IncludeConfig {
  route: string
  upstream?: string
  tools: string[]
  prefix: string
}

/** How a route checks JWT access tokens (an OAuth 2.1 resource server). Durations in seconds. */
export interface JwtConfig {
  issuer: string
  /** undefined: discovered from the issuer's metadata (RFC 8414, then OpenID Connect discovery). */
  jwks_uri: string | undefined
  /** The resource indicator tokens must name in `aud`. */
  audience: string
  algorithms: string[]
  clock_tolerance: number
  principal_claim: string
  jwks_cache: number
  jwks_cooldown: number
  token_cache: number
}

/** A route's access control; at least one of jwt, api_keys or access is set. Paths are absolute. */
export interface AuthConfig {
  jwt: JwtConfig | undefined
  api_keys: string | undefined
  access: string | undefined
  required_scopes: string[]
  metadata: {
    authorization_servers?: string[]
    scopes_supported?: string[]
    resource_documentation?: string
    resource_name?: string
  }
}

/** Glob pattern of a component's name (or URI) → the scopes it needs, per component kind. */
export interface ScopesConfig {
  tools: Record<string, string[]>
  prompts: Record<string, string[]>
  resources: Record<string, string[]>
  resource_templates: Record<string, string[]>
}

/** Bounds on what one client can make the gateway parse or keep (docs/limits-and-errors.md). */
export interface LimitsConfig {
  /** Deepest nesting of arrays and objects in one JSON-RPC message. */
  json_depth: number
  /** Most values (each `[`, `{` and `,` outside strings) in one JSON-RPC message: bounds the parse's work. */
  json_values: number
  /** Largest `capabilities` and `clientInfo` an initialize may store, in bytes of JSON. */
  client_capabilities: number
  client_info: number
  /** Most subscribed URIs per session, and the longest one. */
  subscriptions: number
  uri_length: number
  /** Most components one session may have disabled. */
  hidden_components: number
  /** Most `subscriptions/listen` streams one client (principal, else address) holds open per route and worker, and the route in all. */
  listen_streams_per_client: number
  listen_streams: number
  /** Most 2024-11-05 HTTP+SSE streams (`transports: [sse]`) one client (principal, else address) holds open per route and worker, and the route in all. */
  legacy_sse_streams_per_client: number
  legacy_sse_streams: number
  /** Most messages in one JSON-RPC batch (2025-03-26 sessions). */
  batch_size: number
  /** Most sessions whose roots one worker keeps per route (0: no cache). */
  roots_cache: number
  /** Largest `ctx.session.state` of one session, in bytes of JSON. */
  session_state: number
  /** Largest catalogue of one session's own (`ctx.session.register` and kin), in bytes of JSON. */
  session_catalogue: number
  /** The list and result caches' bounds: bytes per route, bytes in all, private entries per principal. */
  cache_bytes_per_route: number
  cache_bytes_total: number
  cache_entries_per_principal: number
}

/** `list_cache:` of a route: the TTL of pages without an upstream hint, the longest hint honoured (seconds). */
export interface ListCacheConfig {
  ttl_s: number
  max_ttl_s: number
}

/** The event log's bounds (docs/limits-and-errors.md): per session by count, age and bytes; in all by bytes where the log lives in a process. */
export interface EventLogConfig { event_capacity: number; cache_ttl: number; event_bytes: number }
export interface MemoryStoreConfig extends EventLogConfig { type: 'memory'; event_bytes_total: number; session_bytes_total: number; session_bytes_per_principal: number }
/** Sessions held by the node:cluster primary, reached by the workers over IPC. */
export interface ClusterStoreConfig extends EventLogConfig { type: 'cluster'; event_bytes_total: number; session_bytes_total: number; session_bytes_per_principal: number }
/**
 * Sessions in Redis, for several hosts; `connect_timeout` and `command_timeout` in seconds. Exactly one
 * of `url` (one server), `sentinels` with `name` (Sentinel) or `cluster` (seed nodes) is set.
 */
export interface RedisStoreConfig {
  type: 'redis'
  url?: string
  sentinels?: string[]
  name?: string
  db?: number
  cluster?: string[]
  key_prefix: string
  event_capacity: number
  cache_ttl: number
  event_bytes: number
  connect_timeout: number
  command_timeout: number
}
export type StoreConfig = MemoryStoreConfig | ClusterStoreConfig | RedisStoreConfig

/** Bounds on the HTTP server's connections (seconds; 0 for `max_per_address` or `max_total` switches that cap off). */
export interface ConnectionsConfig {
  /** Seconds from a request's first byte to its complete headers. */
  header_timeout: number
  /** Seconds more for its complete body. */
  body_timeout: number
  /** Open connections from one client address; absent: a sixteenth of max_total, at most 1024 (edge/connection-guard.ts). */
  max_per_address?: number
  /** Open connections in all, per process; absent: 80 % of the open-file limit. */
  max_total?: number
  /** Seconds an idle keep-alive connection is kept; longer than a balancer's upstream keep-alive. */
  keepalive_timeout: number
}

/** Where and how the gateway logs (gateway/log/): level, buffering, and what is redacted. */
export interface LogConfig {
  level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent'
  /** Bytes of log lines gathered for one write (at most 4096, what a pipe keeps whole); 0 writes each line synchronously. */
  buffer: number
  /** Seconds between flushes of a buffer that has not filled. */
  flush_interval: number
  redact: {
    /** Header names (lower case) whose values are logged as `[Redacted]` wherever headers are logged. */
    headers: string[]
    /** A query parameter whose name contains one of these (case-insensitive) has its value redacted. */
    query_params: string[]
    /** More pino redact paths (`a.b`, `a["x-y"]`, `*.c`). */
    paths: string[]
  }
}

export interface GatewayConfig {
  /** Absolute path of the file this was loaded from (`<embedded>` for a config built in code). */
  file: string
  listen: { host: string; port: number }
  workers: number | 'auto'
  store: StoreConfig
  /** How 2026-07-28 requestState is signed: an HMAC key (16+ characters) and a lifetime in seconds. */
  request_state: { key?: string; ttl: number }
  /** Largest accepted request body, in bytes. */
  body_limit: number
  connections: ConnectionsConfig
  limits: LimitsConfig
  /** Peers trusted to name the client in X-Forwarded-For (false: none, true: any, or addresses/CIDRs). */
  trust_proxy: boolean | string[]
  /** Seconds a stopping worker lets requests in flight finish. */
  drain_timeout: number
  log: LogConfig
  /** Prometheus metrics at `path`: on the gateway's port, or only on `listen` when set; Host checked like routes. */
  metrics: { enabled: boolean; path: string; listen?: { host: string; port: number }; allowed_hosts: string[] }
  /** The admin API and dashboard on their own listener; undefined: off. */
  admin: AdminConfig | undefined
  /** Keys for `auth.identity_assertion` upstreams; absent when no upstream uses them. */
  upstream_identity?: UpstreamIdentityConfig
  /** Encrypts upstream tokens at rest (required for tokens in a Redis store). */
  token_encryption?: TokenEncryptionConfig
  /** The audit sink (gateway/phases/audit-sink.ts); undefined: off. */
  audit?: AuditConfig
  routes: RouteConfig[]
}

/** `admin`: the operator's listener (gateway/admin/). */
export interface AdminConfig {
  listen: { host: string; port: number }
  /** A bearer token to ask for; with `jwt`, either is accepted. Required beyond loopback (one of them). */
  token: string | undefined
  jwt: { issuer: string; jwks_uri: string | undefined; audience: string; scope: string } | undefined
  /** POST /api/reload is allowed. */
  reload: boolean
  /** The dashboard's try-it panel may call tools. */
  try_it: boolean
}

/** Which tools need the user's approval before they run, and how the gate asks (docs/approval.md). */
export interface ApprovalConfig {
  /** Exact names or globs (`*`, `?`) of the tools, as the client calls them. */
  tools: string[]
  /** Also every tool whose `annotations.destructiveHint` is true. */
  destructive: boolean
  /** Seconds an approval request stays open (the answer, or the 2026-07-28 retry carrying it, must come within). */
  ttl_s: number
  /** A client that cannot ask its user: the call is refused, or allowed unasked and logged. */
  fallback: 'refuse' | 'allow'
  /** Most characters of the arguments (JSON) shown to the user. */
  max_shown_chars: number
}

/** What the rewrite phase changes of one component (every key given replaces the component's own). */
export interface ComponentRewrite {
  /** Tools and prompts: the name clients call it by; resources and templates: their display name. */
  name?: string
  title?: string
  description?: string
  annotations?: Record<string, unknown>
  hidden?: boolean
}

/** The built-in rewrite phase of a route: per component kind, per original name (URI, URI template). */
export interface RewriteConfig {
  tools?: Record<string, ComponentRewrite>
  prompts?: Record<string, ComponentRewrite>
  resources?: Record<string, ComponentRewrite>
  resource_templates?: Record<string, ComponentRewrite>
}

/** `audit`: where the audit record goes (an absolute path, or an open file descriptor). */
export type AuditConfig = { file: string } | { fd: number }

/** The built-in filter of a route's results. */
export interface FilterConfig {
  /** Largest result (its JSON, in bytes) that leaves; a larger one is refused. */
  max_result_bytes?: number
  /** Patterns whose matches are replaced by `[REDACTED]` in every string of a result; `true` in YAML is the default set. */
  redact: string[]
  /** An `isError` tool result whose text carries a stack trace: replaced by a reference (`refuse`) or let through (`pass`). */
  stack_traces: 'refuse' | 'pass'
}
