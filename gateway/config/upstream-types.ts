/**
 * The validated configuration of upstreams: how a proxy route reaches each one (url, ws, command,
 * openapi, sse) and with what credentials (docs/upstream-credentials.md). Split from types.ts, which
 * re-exports everything here.
 */

/**
 * `auth: {oauth: {...}}` of one upstream, defaults filled in by the schema (docs/upstream-credentials.md "Per-user OAuth
 * to remote MCP servers"); durations in seconds.
 */
export interface OAuthConfig {
  /** The public URL of the gateway's callback; its path is served by every worker (default path `/oauth/callback`). */
  redirect_uri: string
  /** Scopes asked for; else the 401's `scope`, else the resource's `scopes_supported`. */
  scope?: string
  /** A client registered by hand; without it the gateway registers itself (RFC 7591). */
  client_id?: string
  client_secret?: string
  token_endpoint_auth_method?: 'none' | 'client_secret_basic' | 'client_secret_post'
  /** The name the gateway registers under. */
  client_name: string
  /** One exchange with the authorization server (discovery, registration, token). */
  timeout: number
  /** How long a consent link stays valid. */
  consent_ttl: number
  /** How long a session's call waits after the user accepted to open the link. */
  consent_wait: number
  /** Consents pending at once per principal (all upstreams), and in the whole gateway. */
  pending_per_principal: number
  pending_total: number
  /** How long a principal's refreshable tokens are kept unused. */
  token_ttl: number
}

/** One upstream MCP server of a proxy route (see docs/proxy-routes.md); durations in seconds. */
export interface UpstreamConfig {
  /** `[a-z0-9-]{1,24}`: the prefix of its component names and its label in logs. */
  name: string
  /** Streamable HTTP (`http(s)://`) or WebSocket (`ws(s)://`); absent for a stdio upstream. An `sse` upstream's URL is here too once loaded. */
  url?: string
  /** The HTTP+SSE transport of 2024-11-05: the GET stream's URL (`http(s)://`); docs/legacy-sse.md. */
  sse?: string
  /** `sse` upstreams: requests of one upstream session awaiting their answer on the stream (1024 when absent). */
  max_pending?: number
  /** Sent on every upstream request: the upstream's own credentials (the client's are never forwarded). */
  headers: Record<string, string>
  /** One upstream request; undefined means the route's read_timeout. */
  timeout?: number
  /** This upstream's deadline within an aggregated list. */
  list_timeout: number
  /** Seconds between active pings while healthy (the upper bound of the backoff while down). */
  health_interval: number
  /** Seconds after the start during which lists wait for this upstream while it has not been available yet. */
  start_wait: number
  /** Stateless clients' calls parked on this worker waiting for the client's answer to the upstream's question. */
  max_parked: number
  /** Input-required rounds of a stateless-only upstream asked of a session client, per call. */
  max_input_rounds: number
  /** Largest message accepted from the upstream, in bytes (HTTP and WebSocket: 16 MiB when absent; stdio: the pool's default). */
  max_message_size?: number
  /** stdio: the command line of the child (argv, or one string split like a shell would); served by the stdio pool. */
  command?: string | string[]
  env?: Record<string, string>
  /** stdio: the child's working directory, absolute (the config file's folder when absent). */
  cwd?: string
  isolation?: 'shared' | 'session' | 'principal'
  /** stdio, `shared`/`principal`: the roots the child is told (folders or file:// URIs), never a user's. */
  roots?: string[]
  /** stdio, `principal`/`session`: the folder of each unit's own folders, absolute once loaded (stdio-pool-state.ts). */
  state_dir?: string
  pool?: { min?: number; max?: number; idle_timeout?: number; ping_interval?: number; ping_timeout?: number; start_timeout?: number }
  /** How the gateway authenticates to this upstream, for the caller (one kind; docs/upstream-credentials.md). */
  auth?: UpstreamAuthConfig
  /** TLS toward an `https:`/`wss:` upstream: PEM files (absolute once loaded) and the name to check. */
  tls?: UpstreamTlsConfig
  /** A REST API described by an OpenAPI 3.0/3.1 document, its operations served as tools (docs/openapi.md). */
  openapi?: OpenApiUpstreamConfig
  /** Per tool (its name on the upstream): results cached for `cache.ttl_s` when the tool is read-only. */
  tools?: Record<string, { cache?: { ttl_s: number } }>
}

/**
 * `openapi:` of an upstream: the document, where calls go, and which operations become tools (none
 * until listed). An operation is exposed when `operations`, `tags` or `paths` name it and, with
 * `methods`, its method is one of them.
 */
export interface OpenApiUpstreamConfig {
  /** A file (absolute once loaded) or an http(s) URL, read at start and on reload. */
  document: string
  /** Where calls go; the document's first server when absent. */
  base_url?: string
  /** operationIds, or globs over them (`*` any run of characters, `?` one). */
  operations: string[]
  tags: string[]
  /** Path templates as the document writes them, or globs over them (`/pets/*`). */
  paths: string[]
  /** Upper-case HTTP methods: a filter over what the three lists select. */
  methods?: string[]
  /** Largest response body read from the API, bytes; default 1 MiB. */
  max_response_bytes: number
  /** Largest document fetched from a URL, bytes; default 16 MiB. */
  max_document_bytes: number
  /** Seconds to fetch a URL document; default 10. */
  document_timeout: number
  /** Redirects followed per call (same origin only); default 0. */
  max_redirects: number
  /** Times a recursive schema is unrolled before it is cut; default 0: a recursive schema is refused. */
  recursion_depth: number
}

/** `tls:` of an upstream: a private CA, a client certificate and key (mutual TLS), the expected server name. */
export interface UpstreamTlsConfig {
  ca?: string
  cert?: string
  key?: string
  servername?: string
}

/**
 * `auth:` of an upstream: exactly one kind. Secret values come from `${ENV}` (read at load and reload)
 * or `file:<path>` (read at start and again whenever the file changes).
 */
export interface UpstreamAuthConfig {
  /** Static headers (values may be `file:` paths). */
  headers?: Record<string, string>
  client_credentials?: ClientCredentialsConfig
  token_exchange?: TokenExchangeConfig
  identity_assertion?: IdentityAssertionConfig
  /** Per-user OAuth to a remote MCP server. */
  oauth?: OAuthConfig
}

/** What every token-endpoint kind shares. Durations in seconds. */
export interface TokenEndpointConfig {
  token_url: string
  client_id: string
  /** The client's secret (a `file:` path, or `${ENV}`), sent with HTTP Basic (client_secret_basic). */
  client_secret: string
  scope?: string
  audience?: string
  /** RFC 8707 resource indicator. */
  resource?: string
  /** One token request; default 5. */
  timeout: number
  /** A token is used until this many seconds before it expires; default 30. */
  refresh_before: number
}

export type ClientCredentialsConfig = TokenEndpointConfig

export interface TokenExchangeConfig extends TokenEndpointConfig {
  /** RFC 8693 actor_token: a token naming the gateway (a `file:` path or `${ENV}`), with its type (default: JWT). */
  actor?: { token: string; token_type: string }
  /** Exchanged tokens kept per worker (the store holds them for every worker); default 10000. */
  max_cached: number
}

export interface IdentityAssertionConfig {
  audience: string
  /** The assertion's lifetime; default 60. */
  ttl_s: number
  /** Claims of the caller's verified token copied into the assertion (besides sub). */
  claims: string[]
}

/** Keys that encrypt upstream tokens kept in a shared store (AES-256-GCM); the first seals, all open. */
export interface TokenEncryptionConfig {
  keys: Array<{ kid: string; file?: string; value?: string }>
}

/** The gateway's own signing keys for identity assertions, and where their JWKS is served. */
export interface UpstreamIdentityConfig {
  /** `iss` of the assertions (and `act.sub`). */
  issuer: string
  /** The first key signs; every key is published (rotation: add the new key second, then move it first). */
  keys: Array<{ kid: string; file: string }>
  /** The path of the JWKS on every listener; default `/.well-known/mcp-edge/jwks.json`. */
  jwks_path: string
}
