/**
 * Every throughput scenario of `npm run bench`, one entry each. A scenario names the server to
 * start, how many sessions the load spreads over, what wrk sends, and what it is compared with; one
 * that needs a feature the gateway does not have yet says why in `unavailable` and is skipped with
 * that note, so adding it later is filling in this table.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { redisMissing } from './redis.ts'
import type { ServerSpec } from './servers.ts'
import { ROOT } from './servers.ts'
import type { WrkLoad } from './wrk.ts'

/** Where the edge-filter-audit row's audit record goes: a regular file, as an operator would set it. */
const AUDIT_FILE = path.join(tmpdir(), `mcp-edge-bench-audit-${process.pid}.jsonl`)

export interface Scenario {
  /** Key in the results. */
  name: string
  /** Row label in the table and the chart. */
  label: string
  group: 'baseline' | 'mcp-edge'
  server: ServerSpec
  /** Sessions created before the run (initialize + initialized); wrk spreads requests over them round-robin. 0: stateless. */
  sessions: number
  load: WrkLoad
  /** The official-SDK scenario this one is compared with (its "× SDK" column). */
  sdkPeer?: string
  /**
   * A service to start first: `redis`, whose URL goes into the server's store config; `upstream`, an
   * mcp-edge serving the bench handler, whose URL goes into the route's first upstream; `rest`, the
   * REST API of servers/rest-echo.ts, whose document and origin go into the first upstream's `openapi`.
   */
  needs?: 'redis' | 'upstream' | 'rest'
  /**
   * Access control on the route: the runner starts a token issuer, adds its `auth` and `scopes` to
   * the route (over `server.route`'s keys, which a row may extend, e.g. with `limits`) and sends its
   * token with every request.
   */
  jwt?: true
  /** Why the scenario cannot run today, or undefined when it can. */
  unavailable?: () => string | undefined
  /**
   * For a feature still landing: when the server does not start or fails the answer checked by hand,
   * the row is skipped with that note instead of failing the run.
   */
  upcoming?: true
}

/** The table's reference rows: the raw Fastify ceiling and the stateful SDK. */
export const FASTIFY = 'fastify-raw'
export const SDK = 'sdk-stateful'

const ECHO: WrkLoad = { tool: 'echo', protocolVersion: '2025-11-25' }
const STATELESS: WrkLoad = { tool: 'echo', protocolVersion: '2026-07-28', stateless: true }
const PROGRESS: WrkLoad = { tool: 'echo_progress', progress: 3, protocolVersion: '2025-11-25' }

const gatewaySource = (): string =>
  readdirSync(path.join(ROOT, 'gateway'), { recursive: true })
    .filter((file) => String(file).endsWith('.ts'))
    .map((file) => readFileSync(path.join(ROOT, 'gateway', String(file)), 'utf8'))
    .join('\n')

/** Keys the bench writes into a Redis, so a shared one (REDIS_URL) is easy to clean. */
export const REDIS_PREFIX = `mcp-edge-bench-${process.pid}:`

/** The store types the gateway's config schema accepts. */
export const storeTypes = (): string[] => {
  const schema = JSON.parse(readFileSync(path.join(ROOT, 'gateway/config/schema.json'), 'utf8')) as {
    definitions: { store: { properties: { type: { enum: string[] } } } }
  }
  return schema.definitions.store.properties.type.enum
}

export const SCENARIOS: Scenario[] = [
  // ---- baselines ----------------------------------------------------------------------------
  {
    name: FASTIFY,
    label: 'raw Fastify JSON-RPC echo (ceiling)',
    group: 'baseline',
    server: { kind: 'script', entry: 'bench/baselines/fastify-echo.ts' },
    sessions: 0,
    load: ECHO,
  },
  {
    name: SDK,
    label: 'official SDK stateful, 1 session',
    group: 'baseline',
    server: { kind: 'script', entry: 'bench/baselines/sdk-stateful.ts', env: { SDK_JSON: '1' } },
    sessions: 1,
    load: ECHO,
  },
  {
    name: 'sdk-stateful-50',
    label: 'official SDK stateful, 50 sessions',
    group: 'baseline',
    server: { kind: 'script', entry: 'bench/baselines/sdk-stateful.ts', env: { SDK_JSON: '1' } },
    sessions: 50,
    load: ECHO,
  },
  {
    name: 'sdk-stateful-progress',
    label: 'official SDK stateful, 3 progress (SSE)',
    group: 'baseline',
    server: { kind: 'script', entry: 'bench/baselines/sdk-stateful.ts', env: { SDK_JSON: '0' } },
    sessions: 1,
    load: PROGRESS,
  },
  {
    name: 'sdk-stateless',
    label: 'official SDK stateless',
    group: 'baseline',
    server: { kind: 'script', entry: 'bench/baselines/sdk-stateless.ts' },
    sessions: 0,
    load: ECHO,
  },

  // ---- mcp-edge -----------------------------------------------------------------------------
  {
    name: 'edge-session',
    label: 'mcp-edge tools/call, 1 session (memory)',
    group: 'mcp-edge',
    server: { kind: 'edge' },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    // The same call with a table of 100 rows in its arguments (2.6 KB, 301 values): what the parse
    // bounds (limits.json_depth, limits.json_values) cost on a body with structure, not one string.
    name: 'edge-structured-args',
    label: 'mcp-edge tools/call, 100-row argument',
    group: 'mcp-edge',
    server: { kind: 'edge' },
    sessions: 1,
    load: { ...ECHO, extraArguments: `"rows":[${Array.from({ length: 100 }, (_, n) => `{"n":${n},"v":"row"}`).join(',')}]` },
    sdkPeer: SDK,
  },
  {
    name: 'edge-filter',
    label: 'mcp-edge tools/call, 1 session, a filter module + built-in redaction',
    group: 'mcp-edge',
    // edge-session with the filter phase on: a module and the built-in redaction.
    server: { kind: 'edge', route: { phases: { filter: path.join(ROOT, 'bench/handlers/pass-filter.ts') }, filter: { redact: true } } },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-approval-route',
    label: 'mcp-edge tools/call, 1 session, approval on the route (the tool needs none)',
    group: 'mcp-edge',
    // edge-session on a route with an approval gate (docs/approval.md): what a call the gate lets
    // through unasked pays for it (a name match and a registry lookup for destructiveHint).
    server: { kind: 'edge', route: { approval: { tools: ['delete_*'], destructive: true } } },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-filter-audit',
    label: 'mcp-edge tools/call, 1 session, a filter module + the audit record',
    group: 'mcp-edge',
    // Issue 28's target: edge-session with one filter module and the audit sink on (a line per call to
    // a regular file, written through the log's buffer) stays ≥ 0.9× edge-session.
    server: { kind: 'edge', route: { phases: { filter: path.join(ROOT, 'bench/handlers/pass-filter.ts') } }, top: { audit: { file: AUDIT_FILE } } },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-rewrite',
    label: 'mcp-edge tools/call, 1 session, the rewrite phase (the called tool redescribed)',
    group: 'mcp-edge',
    // edge-session on a route with `rewrite:` rules: each call is looked up in them before dispatch.
    server: { kind: 'edge', route: { rewrite: { tools: { echo: { description: 'Echoes, redescribed' } } } } },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-tasks-route',
    label: 'mcp-edge tools/call, 1 session, tasks enabled (the tool is no task)',
    group: 'mcp-edge',
    // edge-session on a route that offers tasks: what a plain call pays for them (one property read).
    server: { kind: 'edge', route: { tasks: { enabled: true } } },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-session-catalogue',
    label: 'mcp-edge tools/call, 1 session with its own catalogue',
    group: 'mcp-edge',
    // The edge-session row with a session that changed its own catalogue (ctx.session.register at
    // initialized): every call is served from the session's view, cached per worker.
    server: { kind: 'edge', route: { options: { session_catalogue: true } } },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-search-call-tool',
    label: 'mcp-edge tools/call through call_tool, 1 session (catalogue: search)',
    group: 'mcp-edge',
    // edge-session on a route in search mode, the tool called as a model there calls it: call_tool
    // rewritten at the door into a direct call (catalogue/search-mode.ts). Target: ≥ 0.9× edge-session.
    server: { kind: 'edge', route: { catalogue: 'search' } },
    sessions: 1,
    load: { ...ECHO, viaCallTool: true },
    sdkPeer: SDK,
  },
  {
    name: 'edge-jwt',
    label: 'mcp-edge tools/call, 1 session, JWT auth (RS256, scope check)',
    group: 'mcp-edge',
    // The same row as edge-session with access control on: a JWT verified (RS256, the JWKS fetched
    // once and cached), a required scope and a per-tool scope checked on every call.
    server: { kind: 'edge' },
    jwt: true,
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-default',
    label: 'default config (info logs)',
    group: 'mcp-edge',
    // What `mcp-edge start` serves when the config names only its route: every key at its default,
    // the access line of every request written (buffered) to the log, the command's own process.
    server: { kind: 'edge', via: 'cli', defaults: true },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-default-admin',
    label: 'default config, admin listener on (per-tool metrics, call events)',
    group: 'mcp-edge',
    // The default row with the operator's view on: every call counted per tool in the call events
    // (as in every row) and the admin listener up beside the port; the request path pays the same.
    server: { kind: 'edge', via: 'cli', defaults: true, top: { admin: { listen: '127.0.0.1:0' } } },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-50-sessions',
    label: 'mcp-edge tools/call, 50 sessions',
    group: 'mcp-edge',
    server: { kind: 'edge' },
    sessions: 50,
    load: ECHO,
    sdkPeer: 'sdk-stateful-50',
  },
  {
    name: 'edge-limits-off',
    label: 'mcp-edge tools/call, 50 sessions, limits off',
    group: 'mcp-edge',
    // The row above runs with the default quotas (concurrent requests per session counted); this one without any.
    server: { kind: 'edge', route: { limits: { sessions_per_principal: 0, concurrent_requests_per_session: 0 } } },
    sessions: 50,
    load: ECHO,
    sdkPeer: 'sdk-stateful-50',
  },
  {
    name: 'edge-rate-limit',
    label: 'mcp-edge tools/call, 50 sessions, rate limit on',
    group: 'mcp-edge',
    // A transport rule and a per-tool rule, both counted on every call and high enough never to refuse.
    server: {
      kind: 'edge',
      route: { limits: { rate: [{ key: 'ip', limit: 1_000_000_000, window: 1 }, { key: 'principal', tool: '*', limit: 1_000_000_000, window: 1 }] } },
    },
    sessions: 50,
    load: ECHO,
    sdkPeer: 'sdk-stateful-50',
  },
  {
    name: 'edge-progress-sse',
    label: 'mcp-edge tools/call, 3 progress (SSE)',
    group: 'mcp-edge',
    server: { kind: 'edge' },
    sessions: 1,
    load: PROGRESS,
    sdkPeer: 'sdk-stateful-progress',
  },
  {
    name: 'edge-stateless',
    label: 'mcp-edge stateless 2026-07-28 tools/call',
    group: 'mcp-edge',
    server: { kind: 'edge' },
    sessions: 0,
    load: STATELESS,
    sdkPeer: 'sdk-stateless',
    unavailable: () => (gatewaySource().includes('2026-07-28') ? undefined : 'the gateway does not speak the stateless 2026-07-28 revision yet'),
    upcoming: true,
  },
  {
    name: 'edge-websocket',
    label: 'mcp-edge WebSocket tools/call, 50 sessions',
    group: 'mcp-edge',
    server: { kind: 'edge', transports: ['streamable_http', 'websocket'] },
    // Each of the load's connections initializes its own session over the socket.
    sessions: 0,
    load: { ...ECHO, websocket: true },
    sdkPeer: 'sdk-stateful-50',
    unavailable: () => (existsSync(path.join(ROOT, 'gateway/transport/websocket.ts')) ? undefined : 'the gateway has no WebSocket transport yet'),
    upcoming: true,
  },
  {
    name: 'edge-cluster',
    label: 'mcp-edge tools/call, cluster store (2 workers)',
    group: 'mcp-edge',
    server: { kind: 'edge', workers: 2, store: { type: 'cluster' }, via: 'cli' },
    sessions: 50,
    load: ECHO,
    sdkPeer: 'sdk-stateful-50',
    unavailable: () => (storeTypes().includes('cluster') ? undefined : 'the gateway has no cluster store yet'),
    upcoming: true,
  },
  {
    name: 'edge-proxy-stdio',
    label: 'tools/call through a stdio upstream (proxy route, 1 session)',
    group: 'mcp-edge',
    // A transparent proxy route (no handler, no prefix) in front of servers/stdio-echo.mjs, which
    // answers the same `echo: …` at once: the row measures the proxy and the stdio pool.
    server: {
      kind: 'edge',
      route: {
        handler: undefined,
        prefix: 'never',
        upstreams: [{ name: 'echo', command: ['node', path.join(ROOT, 'bench/servers/stdio-echo.mjs')] }],
      },
    },
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
    unavailable: () => (existsSync(path.join(ROOT, 'gateway/upstream/stdio-pools.ts')) ? undefined : 'the gateway has no stdio upstreams yet'),
    upcoming: true,
  },
  {
    name: 'edge-proxy-http',
    label: 'tools/call through an HTTP upstream (proxy route, 1 session)',
    group: 'mcp-edge',
    // A transparent proxy route in front of another mcp-edge process (the bench handler) over
    // Streamable HTTP: keep-alive connections, the session's upstream session made once and reused.
    server: {
      kind: 'edge',
      route: { handler: undefined, prefix: 'never', upstreams: [{ name: 'up', url: 'filled in by withService', health_interval: 3600 }] },
    },
    needs: 'upstream',
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-proxy-http-jwt-static',
    label: 'tools/call through an HTTP upstream, JWT caller, static upstream headers (1 session)',
    group: 'mcp-edge',
    // The baseline of the token-exchange row: the same JWT-checked caller and proxy hop, the upstream
    // credential a static header merged once into the transport.
    server: {
      kind: 'edge',
      route: { handler: undefined, prefix: 'never', upstreams: [{ name: 'up', url: 'filled in by withService', health_interval: 3600, auth: { headers: { authorization: 'Bearer static-upstream-token' } } }] },
    },
    needs: 'upstream',
    jwt: true,
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    name: 'edge-proxy-http-token-exchange',
    label: 'tools/call through an HTTP upstream, JWT caller, RFC 8693 token exchange (cached) (1 session)',
    group: 'mcp-edge',
    // The same as edge-proxy-http-jwt-static with `auth: {token_exchange}`: the exchange happens once,
    // then every call takes the held token synchronously (target: ≤ 1.1× the static row's CPU per call).
    server: {
      kind: 'edge',
      route: {
        handler: undefined,
        prefix: 'never',
        upstreams: [{ name: 'up', url: 'filled in by withService', health_interval: 3600, auth: { token_exchange: { token_url: 'issuer', client_id: 'bench-gateway', client_secret: 'bench-secret', audience: 'urn:bench:upstream' } } }],
      },
    },
    needs: 'upstream',
    jwt: true,
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
  },
  {
    // The REST call itself, no MCP: what the openapi row is compared with (its added latency, and the
    // gateway's CPU per call, which is all of that row's server CPU).
    name: 'rest-direct',
    label: 'REST GET /echo called directly (the openapi row\'s API)',
    group: 'baseline',
    server: { kind: 'script', entry: 'bench/servers/rest-echo.ts' },
    sessions: 0,
    load: { tool: 'echo', rest: '/echo?message=' },
  },
  {
    name: 'edge-proxy-openapi',
    label: 'tools/call through an openapi upstream (REST GET /echo, 1 session)',
    group: 'mcp-edge',
    // A proxy route whose one upstream is the REST API of rest-direct, described by the document it
    // serves: each tools/call is one GET /echo?message=m<id> on a keep-alive connection.
    server: {
      kind: 'edge',
      route: { handler: undefined, prefix: 'never', upstreams: [{ name: 'api', openapi: { document: 'filled in by withService', base_url: 'filled in by withService', operations: ['echo'] } }] },
    },
    needs: 'rest',
    sessions: 1,
    load: ECHO,
    sdkPeer: SDK,
    unavailable: () => (existsSync(path.join(ROOT, 'gateway/upstream/openapi/openapi-upstream.ts')) ? undefined : 'the gateway has no openapi upstreams yet'),
  },
  {
    name: 'edge-redis',
    label: 'mcp-edge tools/call, redis store',
    group: 'mcp-edge',
    server: { kind: 'edge', store: { type: 'redis', key_prefix: REDIS_PREFIX } },
    sessions: 50,
    load: ECHO,
    sdkPeer: 'sdk-stateful-50',
    needs: 'redis',
    unavailable: () => (storeTypes().includes('redis') ? redisMissing() : 'the gateway has no redis store yet'),
    upcoming: true,
  },
]

/** The scenario's server with the URL of the service it needs filled in: the store's, the first upstream's. */
export function withService(server: ServerSpec, storeUrl: string | undefined, upstreamUrl?: string, restOrigin?: string): ServerSpec {
  if (server.kind !== 'edge') return server
  let spec = server
  if (storeUrl !== undefined) spec = { ...spec, store: { ...spec.store, url: storeUrl } }
  const upstreams = spec.route?.upstreams as Array<Record<string, unknown>> | undefined
  if (upstreamUrl !== undefined && upstreams !== undefined) {
    spec = { ...spec, route: { ...spec.route, upstreams: [{ ...upstreams[0], url: upstreamUrl }, ...upstreams.slice(1)] } }
  }
  if (restOrigin !== undefined && upstreams !== undefined) {
    const openapi = { ...(upstreams[0]!.openapi as Record<string, unknown>), document: `${restOrigin}/openapi.json`, base_url: restOrigin }
    spec = { ...spec, route: { ...spec.route, upstreams: [{ ...upstreams[0], openapi }, ...upstreams.slice(1)] } }
  }
  return spec
}
