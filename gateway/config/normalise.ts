/**
 * Turns a validated, defaulted document into `GatewayConfig`: the shorthand forms the YAML allows
 * are expanded here, so nothing downstream has to know about them.
 */
import path from 'node:path'
import type { JsonObject } from '../wire/mcp-types.ts'
import { DEFAULT_SECRET_PATTERNS } from '../phases/secret-patterns.ts'
import type { AdminConfig, ApprovalConfig, AuthConfig, CapabilitiesConfig, FilterConfig, GatewayConfig, QuotasConfig, RouteConfig, ScopesConfig, StoreConfig, OpenApiUpstreamConfig, UpstreamAuthConfig, UpstreamTlsConfig } from './types.ts'

type ListChanged = boolean | { list_changed?: boolean }
type Resources = boolean | { subscribe?: boolean; list_changed?: boolean }

/** The document as `schema.json` guarantees it after defaults: capabilities still in YAML shorthand, the store's type maybe absent. */
export interface ValidatedDocument extends Omit<GatewayConfig, 'file' | 'routes' | 'store' | 'limits' | 'admin'> {
  admin?: Omit<AdminConfig, 'listen' | 'token' | 'jwt'> & { listen: string; token?: string; jwt?: Omit<NonNullable<AdminConfig['jwt']>, 'jwks_uri'> & { jwks_uri?: string } }
  store: Omit<StoreConfig, 'type'> & { type?: StoreConfig['type'] }
  /** The parse bounds (defaulted) and the rate limits and quotas (as written). */
  limits: GatewayConfig['limits'] & Partial<QuotasConfig>
  auth?: RawAuth
  scopes?: Partial<ScopesConfig>
  routes: Array<Omit<RouteConfig, 'capabilities' | 'upstreams' | 'handler' | 'auth' | 'scopes' | 'limits' | 'quotas' | 'phases' | 'filter' | 'approval' | 'include' | 'rewrite' | 'audit_arguments'> & {
    include?: RouteConfig['include']
    rewrite?: RouteConfig['rewrite']
    audit_arguments?: boolean
    handler?: string
    upstreams?: RouteConfig['upstreams']
    capabilities: { logging: boolean; completions: boolean; prompts: ListChanged; resources: Resources; tools: ListChanged }
    auth?: RawAuth | false
    scopes?: Partial<ScopesConfig>
    limits?: Partial<QuotasConfig>
    phases?: { rewrite?: string; filter?: string; log?: string }
    filter?: { max_result_bytes?: number; redact?: boolean | string[]; stack_traces?: 'refuse' | 'pass' }
    approval?: Partial<ApprovalConfig>
  }>
}

/** An `auth` block as written: schema defaults are not applied inside a route's `anyOf`, so they are here. */
type RawAuth = {
  jwt?: Partial<AuthConfig['jwt'] & object> & { issuer: string; audience: string }
  api_keys?: string
  access?: string
  required_scopes?: string[]
  metadata?: AuthConfig['metadata']
}

/** Builds the typed config; handler paths are resolved against the folder of `file`. */
export function normalise(doc: ValidatedDocument, file: string): GatewayConfig {
  const folder = path.dirname(file)
  // `limits` holds the parse bounds (gateway-wide) and the rate limits and quotas (per route too).
  const { rate: _rate, sessions_per_principal: _sessions, concurrent_requests_per_session: _concurrent, ...limits } = { ...doc.limits }
  return {
    file,
    listen: { ...doc.listen },
    workers: doc.workers,
    store: store(doc.store, doc.workers),
    body_limit: doc.body_limit,
    connections: { ...doc.connections },
    limits,
    trust_proxy: Array.isArray(doc.trust_proxy) ? [...doc.trust_proxy] : doc.trust_proxy,
    drain_timeout: doc.drain_timeout,
    request_state: { ...doc.request_state },
    log: { ...doc.log, redact: { ...doc.log.redact, headers: doc.log.redact.headers.map((name) => name.toLowerCase()) } },
    metrics: { ...doc.metrics, allowed_hosts: [...(doc.metrics.allowed_hosts ?? [])] },
    admin: doc.admin === undefined ? undefined : adminConfig(doc.admin),
    ...(doc.token_encryption === undefined ? {} : {
      token_encryption: { keys: doc.token_encryption.keys.map((key) => (key.file === undefined ? { ...key } : { ...key, file: path.resolve(folder, key.file) })) },
    }),
    ...(doc.upstream_identity === undefined ? {} : {
      upstream_identity: { ...doc.upstream_identity, keys: doc.upstream_identity.keys.map((key) => ({ kid: key.kid, file: path.resolve(folder, key.file) })) },
    }),
    ...(doc.audit === undefined ? {} : { audit: 'file' in doc.audit ? { file: path.resolve(folder, doc.audit.file) } : { fd: doc.audit.fd } }),
    routes: doc.routes.map((route) => ({
      ...route,
      handler: route.handler === undefined ? undefined : path.resolve(folder, route.handler),
      upstreams: (route.upstreams ?? []).map((upstream) => ({
        ...upstream,
        // An sse upstream is an HTTP upstream to everything that asks for its URL (auth, tls, health).
        ...(upstream.sse === undefined ? {} : { url: upstream.sse }),
        headers: { ...upstream.headers },
        ...(upstream.command === undefined ? {} : { cwd: path.resolve(folder, upstream.cwd ?? '.') }),
        ...(upstream.state_dir === undefined ? {} : { state_dir: path.resolve(folder, upstream.state_dir) }),
        ...(upstream.auth === undefined ? {} : { auth: upstreamAuth(upstream.auth, folder) }),
        ...(upstream.tls === undefined ? {} : { tls: upstreamTls(upstream.tls, folder) }),
        ...(upstream.openapi === undefined ? {} : { openapi: openApiConfig(upstream.openapi, folder) }),
      })),
      tools: { ...route.tools, deny: [...route.tools.deny], rename: { ...route.tools.rename } },
      transports: [...route.transports],
      server: { ...route.server },
      capabilities: capabilities(route.capabilities),
      pagination: { ...route.pagination },
      send_buffer: { ...route.send_buffer },
      cache: { ...route.cache },
      list_cache: route.list_cache === false ? false : { ttl_s: route.list_cache?.ttl_s ?? 60, max_ttl_s: route.list_cache?.max_ttl_s ?? 3600 },
      result_cache: { scope: route.result_cache?.scope ?? 'private' },
      tasks: { ...route.tasks },
      allowed_origins: [...route.allowed_origins],
      options: route.options as JsonObject,
      search: { ...route.search },
      include: (route.include ?? []).map((source) => ({ ...source, tools: [...source.tools] })),
      phases: {
        ...(route.phases?.rewrite === undefined ? {} : { rewrite: path.resolve(folder, route.phases.rewrite) }),
        ...(route.phases?.filter === undefined ? {} : { filter: path.resolve(folder, route.phases.filter) }),
        ...(route.phases?.log === undefined ? {} : { log: path.resolve(folder, route.phases.log) }),
      },
      filter: filterConfig(route.filter),
      approval: approvalConfig(route.approval),
      rewrite: route.rewrite,
      audit_arguments: route.audit_arguments ?? false,
      auth: auth(route.auth === undefined ? doc.auth : route.auth === false ? undefined : route.auth, folder),
      scopes: scopes(route.scopes ?? doc.scopes),
      limits,
      quotas: quotas(route.limits, doc.limits),
    })),
  }
}

/** The built-in filter as written: `redact: true` is the default secret set, `false` none. */
function filterConfig(raw: { max_result_bytes?: number; redact?: boolean | string[]; stack_traces?: 'refuse' | 'pass' } | undefined): FilterConfig | undefined {
  if (raw === undefined) return undefined
  const redact = raw.redact === true ? [...DEFAULT_SECRET_PATTERNS] : raw.redact === false || raw.redact === undefined ? [] : [...raw.redact]
  return { ...(raw.max_result_bytes === undefined ? {} : { max_result_bytes: raw.max_result_bytes }), redact, stack_traces: raw.stack_traces ?? 'refuse' }
}

/** The approval gate as written, with schema.json's defaults; undefined when it names no tool (nothing to gate). */
function approvalConfig(raw: Partial<ApprovalConfig> | undefined): ApprovalConfig | undefined {
  if (raw === undefined) return undefined
  const approval: ApprovalConfig = {
    tools: [...(raw.tools ?? [])],
    destructive: raw.destructive ?? false,
    ttl_s: raw.ttl_s ?? 120,
    fallback: raw.fallback ?? 'refuse',
    max_shown_chars: raw.max_shown_chars ?? 2000,
  }
  return approval.tools.length === 0 && !approval.destructive ? undefined : approval
}

// `true` means "everything this capability has", and a missing sub-flag means the same.
function capabilities(raw: ValidatedDocument['routes'][number]['capabilities']): CapabilitiesConfig {
  const { prompts, resources, tools } = raw
  return {
    logging: raw.logging,
    completions: raw.completions,
    prompts: prompts === false ? false : { list_changed: prompts === true || (prompts.list_changed ?? true) },
    tools: tools === false ? false : { list_changed: tools === true || (tools.list_changed ?? true) },
    resources: resources === false
      ? false
      : {
          subscribe: resources === true || (resources.subscribe ?? true),
          list_changed: resources === true || (resources.list_changed ?? true),
        },
  }
}

// Without a `type`, one worker keeps sessions in its memory; several share them through the primary.
function store(raw: ValidatedDocument['store'], workers: GatewayConfig['workers']): StoreConfig {
  const type = raw.type ?? (workers === 1 ? 'memory' : 'cluster')
  return { ...raw, type } as StoreConfig
}

// The defaults of schema.json's `auth`, applied here for route-level blocks too.
function auth(raw: RawAuth | undefined, folder: string): AuthConfig | undefined {
  if (raw === undefined) return undefined
  const jwt = raw.jwt
  return {
    jwt: jwt === undefined
      ? undefined
      : {
          issuer: jwt.issuer,
          jwks_uri: jwt.jwks_uri,
          audience: jwt.audience,
          algorithms: [...(jwt.algorithms ?? ['RS256', 'ES256'])],
          clock_tolerance: jwt.clock_tolerance ?? 30,
          principal_claim: jwt.principal_claim ?? 'sub',
          jwks_cache: jwt.jwks_cache ?? 600,
          jwks_cooldown: jwt.jwks_cooldown ?? 30,
          token_cache: jwt.token_cache ?? 10000,
        },
    api_keys: raw.api_keys === undefined ? undefined : path.resolve(folder, raw.api_keys),
    access: raw.access === undefined ? undefined : path.resolve(folder, raw.access),
    required_scopes: [...(raw.required_scopes ?? [])],
    metadata: { ...raw.metadata },
  }
}

function scopes(raw: Partial<ScopesConfig> | undefined): ScopesConfig {
  return { tools: { ...raw?.tools }, prompts: { ...raw?.prompts }, resources: { ...raw?.resources }, resource_templates: { ...raw?.resource_templates } }
}

/** Defaults of the rate limits and quotas (docs/limits-and-errors.md, rate limits and quotas): high enough for any real client, low enough that one client cannot take a route. */
export const QUOTA_DEFAULTS: Readonly<QuotasConfig> = { rate: [], sessions_per_principal: 100, concurrent_requests_per_session: 64 }

// A route's keys replace the gateway's, which replace the defaults (a `rate` list as a whole).
function quotas(own: Partial<QuotasConfig> | undefined, gateway: Partial<QuotasConfig> | undefined): QuotasConfig {
  const merged = { ...QUOTA_DEFAULTS }
  for (const layer of [gateway, own]) {
    if (layer?.rate !== undefined) merged.rate = layer.rate
    if (layer?.sessions_per_principal !== undefined) merged.sessions_per_principal = layer.sessions_per_principal
    if (layer?.concurrent_requests_per_session !== undefined) merged.concurrent_requests_per_session = layer.concurrent_requests_per_session
  }
  return { ...merged, rate: merged.rate.map((rule) => ({ ...rule })) }
}

/** `admin` as written (`listen` as host:port) to its typed form. */
function adminConfig(admin: NonNullable<ValidatedDocument['admin']>): AdminConfig {
  const cut = admin.listen.lastIndexOf(':')
  const host = admin.listen.slice(0, cut).replace(/^\[(.*)\]$/, '$1')
  return {
    listen: { host, port: Number(admin.listen.slice(cut + 1)) },
    token: admin.token,
    jwt: admin.jwt === undefined ? undefined : { ...admin.jwt, jwks_uri: admin.jwt.jwks_uri, scope: admin.jwt.scope ?? 'mcp-edge:admin' },
    reload: admin.reload ?? false,
    try_it: admin.try_it ?? true,
  }
}

/** `file:<path>` values resolved against the config's folder (the credential providers read them). */
function fileValue(value: string, folder: string): string {
  return value.startsWith('file:') ? `file:${path.resolve(folder, value.slice(5))}` : value
}

function upstreamAuth(auth: UpstreamAuthConfig, folder: string): UpstreamAuthConfig {
  const copy = structuredClone(auth)
  if (copy.headers !== undefined) for (const [name, value] of Object.entries(copy.headers)) copy.headers[name] = fileValue(value, folder)
  for (const endpoint of [copy.client_credentials, copy.token_exchange]) {
    if (endpoint !== undefined) endpoint.client_secret = fileValue(endpoint.client_secret, folder)
  }
  if (copy.token_exchange?.actor !== undefined) copy.token_exchange.actor.token = fileValue(copy.token_exchange.actor.token, folder)
  return copy
}

/** An `openapi:` block with its lists copied and a file document made absolute (a URL stays as it is). */
function openApiConfig(config: OpenApiUpstreamConfig, folder: string): OpenApiUpstreamConfig {
  const document = /^https?:\/\//i.test(config.document) ? config.document : path.resolve(folder, config.document)
  return {
    ...config,
    document,
    operations: [...config.operations],
    tags: [...config.tags],
    paths: [...config.paths],
    ...(config.methods === undefined ? {} : { methods: config.methods.map((method) => method.toUpperCase()) }),
  }
}

function upstreamTls(tls: UpstreamTlsConfig, folder: string): UpstreamTlsConfig {
  const resolved = (file: string | undefined): string | undefined => (file === undefined ? undefined : path.resolve(folder, file))
  const { ca, cert, key, servername } = tls
  return Object.fromEntries(Object.entries({ ca: resolved(ca), cert: resolved(cert), key: resolved(key), servername }).filter(([, value]) => value !== undefined))
}
