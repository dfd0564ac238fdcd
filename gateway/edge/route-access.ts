/**
 * The access phase of one protected route, without HTTP: from a request's credential and facts to a
 * `Caller`, or a refusal the transport turns into 401/403 with a Bearer challenge (RFC 6750, RFC 9728).
 *
 *   Authorization: Bearer <JWT> ──► JwtVerifier ──┐
 *   X-API-Key / Bearer <key>   ──► ApiKeys ───────┼─► identity (or none) ──► access module? ──► principal?
 *   nothing                                       ┘   bad credential: 401       allow · deny · add scopes   none: 401
 *                                                                                                │
 *                          required_scopes ⊆ scopes? ── no: 403 insufficient_scope ◄─────────────┘
 *                                   │ yes
 *                                   ▼
 *                      Caller {principal, scopes, address}
 *
 * Credentials never leave this module: nothing here logs, stores or forwards a token or key.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type { Logger } from 'pino'
import type { AuthConfig, RouteConfig } from '../config/types.ts'
import { EdgeCode, EdgeError, type EdgeCodeName } from '../wire/errors.ts'
import type { ComponentKind } from '../registry/context.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { Registry } from '../registry/registry.ts'
import type { ComponentScopes } from '../registry/component-scopes.ts'
import { loadAccessModule, type AccessDecision, type AccessFunction, type AccessRequest } from './access-module.ts'
import { ApiKeys } from './api-keys.ts'
import type { Caller } from './caller.ts'
import type { VerifiedToken } from '../wire/caller.ts'
import { calledTool } from '../wire/called-tool.ts'
import { JwtVerifier, type Identity } from './jwt-verifier.ts'

/** Why a request may not proceed; the transport answers with `status` (from the error table) and the challenge. */
export interface Refusal {
  readonly code: EdgeCodeName
  readonly status: number
  readonly message: string
  /** `error` of the Bearer challenge (`invalid_token`, `insufficient_scope`); absent when no credential came. */
  readonly error?: 'invalid_token' | 'insufficient_scope'
  /** The scopes to ask for (`scope` of the challenge). */
  readonly scope?: string
  /** Seconds to wait before trying again (`Retry-After`), when the refusal is for now only. */
  readonly retryAfter?: string
}

/** The facts the access module may decide on, besides the credential. */
export interface RequestFacts {
  readonly httpMethod: string
  readonly method: string | undefined
  readonly tool: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly address: string
  readonly transport: 'streamable_http' | 'websocket' | 'sse'
}

/** A request with no credential at all (as opposed to a bad one). */
export const NO_CREDENTIAL = null
const NO_SCOPES: ReadonlySet<string> = new Set()
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

function refusal(code: EdgeCodeName, message: string, extra: Partial<Refusal> = {}): Refusal {
  return { code, status: EdgeCode[code].status, message, ...extra }
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && 'code' in value && 'status' in value
}

export class RouteAccess {
  readonly location: string
  readonly config: AuthConfig
  /** True when an access module runs: POSTs then finish their access phase once the body is parsed. */
  readonly hasModule: boolean
  readonly #verifier: JwtVerifier | undefined
  readonly #keys: ApiKeys | undefined
  readonly #decide: AccessFunction | undefined
  readonly #required: readonly string[]
  readonly #requiredScope: string | undefined
  readonly #logger: Logger
  /** A search route: call_tool is checked as the tool it calls (wire/called-tool.ts). */
  readonly #search: boolean

  private constructor(route: RouteConfig, verifier: JwtVerifier | undefined, keys: ApiKeys | undefined, decide: AccessFunction | undefined, logger: Logger) {
    const config = route.auth!
    this.location = route.location
    this.config = config
    this.#verifier = verifier
    this.#keys = keys
    this.#decide = decide
    this.hasModule = decide !== undefined
    this.#required = config.required_scopes
    this.#requiredScope = config.required_scopes.length === 0 ? undefined : config.required_scopes.join(' ')
    this.#logger = logger
    this.#search = route.catalogue === 'search'
  }

  /** The access phase of `route`, or undefined for an open route. Throws MCP_EDGE_CONFIG_INVALID (or HANDLER_INVALID for the module). */
  static async build(route: RouteConfig, logger: Logger): Promise<RouteAccess | undefined> {
    const auth = route.auth
    if (auth === undefined) return undefined
    if (auth.jwt === undefined && auth.api_keys === undefined && auth.access === undefined) {
      throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `route ${route.location}: auth needs jwt, api_keys or access (auth: false opens a route)`)
    }
    const verifier = auth.jwt === undefined ? undefined : new JwtVerifier(auth.jwt)
    const keys = auth.api_keys === undefined ? undefined : ApiKeys.load(auth.api_keys)
    const decide = auth.access === undefined ? undefined : await loadAccessModule(auth.access)
    const access = new RouteAccess(route, verifier, keys, decide, logger)
    // Fetch the keys now, so the first client does not wait; a failure is retried by requests.
    verifier?.warm().catch((error: unknown) => logger.warn({ err: error, route: route.location }, 'cannot fetch the JWKS yet'))
    return access
  }

  /**
   * What `mcp-edge check` reports for `route`'s access phase: every part tried on its own (the JWT
   * settings, the API keys file, the access module), so each problem is named at once. Fetches nothing.
   */
  static async problems(route: RouteConfig): Promise<string[]> {
    const auth = route.auth
    if (auth === undefined) return []
    if (auth.jwt === undefined && auth.api_keys === undefined && auth.access === undefined) {
      return [`auth needs jwt, api_keys or access (auth: false opens a route)`]
    }
    const problems: string[] = []
    const attempt = async (part: () => unknown): Promise<void> => {
      try {
        await part()
      } catch (error) {
        problems.push((error as Error).message)
      }
    }
    if (auth.jwt !== undefined) await attempt(() => new JwtVerifier(auth.jwt!))
    if (auth.api_keys !== undefined) await attempt(() => ApiKeys.load(auth.api_keys!))
    if (auth.access !== undefined) await attempt(() => loadAccessModule(auth.access!))
    return problems
  }

  /**
   * Checks the request's credential: its identity, NO_CREDENTIAL when it carried none, or a refusal
   * (401 for a bad one, 503 when the keys cannot be fetched). Synchronous for a token seen before.
   */
  identify(headers: IncomingHttpHeaders): Identity | null | Refusal | Promise<Identity | Refusal> {
    // Only an access module: credentials are its business (a team's own identity system).
    if (this.#verifier === undefined && this.#keys === undefined) return NO_CREDENTIAL
    const authorization = headers.authorization
    let token: string | undefined
    if (authorization !== undefined) {
      if (authorization.length < 8 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') {
        return this.#invalid('Authorization must be a Bearer token')
      }
      token = authorization.slice(7).trim()
    }
    const apiKey = headers['x-api-key']
    if (typeof apiKey === 'string' && this.#keys !== undefined) return this.#apiKey(apiKey)
    if (token === undefined) return NO_CREDENTIAL
    if (this.#verifier !== undefined && JWT_SHAPE.test(token)) {
      let verified: Identity | Promise<Identity>
      try {
        verified = this.#verifier.verify(token)
      } catch (error) {
        return this.#tokenRefusal(error)
      }
      return verified instanceof Promise ? verified.catch((error: unknown) => this.#tokenRefusal(error)) : verified
    }
    if (this.#keys !== undefined) return this.#apiKey(token)
    return this.#invalid('The access token is invalid')
  }

  /**
   * Finishes the access phase: runs the access module (if any) on the identity found, then checks that
   * someone was recognised and holds the route's required scopes. Never throws: a failing module is a
   * 403 with a reference, logged.
   */
  decide(identity: Identity | null, facts: RequestFacts): Caller | Refusal | Promise<Caller | Refusal> {
    if (this.#decide === undefined) return this.#finish(identity?.principal, identity?.scopes, facts.address, identity?.token)
    let decision: AccessDecision | Promise<AccessDecision>
    try {
      decision = this.#decide(this.#accessRequest(identity, facts))
    } catch (error) {
      return this.#moduleFailed(error, facts)
    }
    if (decision instanceof Promise) {
      return decision.then(
        (settled) => this.#apply(settled, identity, facts),
        (error: unknown) => this.#moduleFailed(error, facts),
      )
    }
    return this.#apply(decision, identity, facts)
  }

  /**
   * For a request that uses one component (tools/call, prompts/get, resources/read, completion):
   * the 403 challenge when the caller lacks its scopes, asking for the route's and the component's.
   */
  checkComponent(scopes: ComponentScopes | undefined, registry: Registry, caller: Caller, method: string | undefined, params: JsonObject | undefined): Refusal | undefined {
    if (scopes === undefined || caller.scopes === undefined || params === undefined) return undefined
    const target = componentOf(registry, method, params, this.#search)
    if (target === undefined) return undefined
    const missing = scopes.missing(target[0], target[1], caller.scopes)
    if (missing === undefined) return undefined
    const wanted = new Set([...this.#required, ...scopes.needs(target[0], target[1])])
    return refusal('MCP_EDGE_INSUFFICIENT_SCOPE', `Forbidden: ${target[0]} ${target[1]} needs scope ${missing.join(' ')}`, {
      error: 'insufficient_scope',
      scope: [...wanted].join(' '),
    })
  }

  /** The `WWW-Authenticate` value for a refusal; `metadataUrl` is where this route's protected resource metadata is. */
  challenge(refused: Refusal, metadataUrl: string): string | undefined {
    if (refused.code !== 'MCP_EDGE_UNAUTHORIZED' && refused.code !== 'MCP_EDGE_INSUFFICIENT_SCOPE') return undefined
    let value = 'Bearer'
    const params: string[] = []
    if (refused.error !== undefined) params.push(`error="${refused.error}"`, `error_description="${quotable(refused.message)}"`)
    params.push(`resource_metadata="${metadataUrl}"`)
    const scope = refused.scope ?? this.#requiredScope
    if (scope !== undefined) params.push(`scope="${quotable(scope)}"`)
    value += ` ${params.join(', ')}`
    return value
  }

  /** The protected resource metadata (RFC 9728); `resource` is the audience, else the route's URL as requested. */
  metadata(requestedUrl: string): JsonObject {
    const { jwt, metadata, required_scopes } = this.config
    const document: JsonObject = { resource: jwt?.audience ?? requestedUrl }
    const servers = metadata.authorization_servers ?? (jwt === undefined ? undefined : [jwt.issuer])
    if (servers !== undefined) document.authorization_servers = servers
    document.bearer_methods_supported = ['header']
    const scopes = metadata.scopes_supported ?? (required_scopes.length > 0 ? required_scopes : undefined)
    if (scopes !== undefined) document.scopes_supported = scopes
    if (jwt !== undefined) document.resource_signing_alg_values_supported = jwt.algorithms
    if (metadata.resource_name !== undefined) document.resource_name = metadata.resource_name
    if (metadata.resource_documentation !== undefined) document.resource_documentation = metadata.resource_documentation
    return document
  }

  #finish(principal: string | undefined, scopes: ReadonlySet<string> | undefined, address: string, token?: VerifiedToken): Caller | Refusal {
    if (principal === undefined) return refusal('MCP_EDGE_UNAUTHORIZED', 'Unauthorized: this route needs an access token')
    const held = scopes ?? NO_SCOPES
    for (const scope of this.#required) {
      if (!held.has(scope)) {
        return refusal('MCP_EDGE_INSUFFICIENT_SCOPE', `Forbidden: this route needs scope ${this.#requiredScope}`, { error: 'insufficient_scope', scope: this.#requiredScope })
      }
    }
    return token === undefined ? { principal, scopes: held, address } : { principal, scopes: held, address, token }
  }

  #apply(decision: AccessDecision, identity: Identity | null, facts: RequestFacts): Caller | Refusal {
    if (decision === undefined || decision === null) return this.#finish(identity?.principal, identity?.scopes, facts.address, identity?.token)
    if ('deny' in decision) {
      const status = typeof decision.status === 'number' && decision.status >= 400 && decision.status < 500 ? decision.status : EdgeCode.MCP_EDGE_ACCESS_DENIED.status
      const message = typeof decision.message === 'string' ? decision.message : 'Forbidden'
      this.#logger.info({ route: this.location, principal: identity?.principal, status }, 'access module denied the request')
      return { code: 'MCP_EDGE_ACCESS_DENIED', status, message }
    }
    if ('addScopes' in decision) {
      const scopes = new Set(identity?.scopes)
      for (const scope of decision.addScopes) scopes.add(scope)
      return this.#finish(identity?.principal, scopes, facts.address, identity?.token)
    }
    if ('allow' in decision && decision.allow === true) {
      const principal = decision.principal ?? identity?.principal
      const scopes = decision.scopes === undefined ? identity?.scopes : new Set(decision.scopes)
      // A principal the module renamed is no longer the token's subject: it acts for no one upstream.
      return this.#finish(principal, scopes, facts.address, principal === identity?.principal ? identity?.token : undefined)
    }
    return this.#moduleFailed(new TypeError(`the access module returned ${JSON.stringify(decision)}`), facts)
  }

  #accessRequest(identity: Identity | null, facts: RequestFacts): AccessRequest {
    return {
      route: this.location,
      httpMethod: facts.httpMethod,
      method: facts.method,
      tool: facts.tool,
      headers: facts.headers,
      address: facts.address,
      principal: identity?.principal,
      scopes: identity?.scopes ?? NO_SCOPES,
      transport: facts.transport,
    }
  }

  #moduleFailed(error: unknown, facts: RequestFacts): Refusal {
    const reference = randomUUID()
    this.#logger.error({ err: error, reference, route: this.location, method: facts.method, address: facts.address }, 'access module failed')
    return refusal('MCP_EDGE_ACCESS_DENIED', `Forbidden: the access check failed (reference ${reference})`)
  }

  #apiKey(key: string): Identity | Refusal {
    return this.#keys!.identify(key) ?? this.#invalid('Unknown API key')
  }

  #invalid(message: string): Refusal {
    return refusal('MCP_EDGE_UNAUTHORIZED', message, { error: 'invalid_token' })
  }

  #tokenRefusal(error: unknown): Refusal {
    if (error instanceof EdgeError && error.code === 'MCP_EDGE_UNAUTHORIZED') return this.#invalid(error.message)
    if (error instanceof EdgeError && error.code === 'MCP_EDGE_AUTH_UNAVAILABLE') {
      this.#logger.warn({ route: this.location, reason: error.message }, 'cannot check access tokens')
      const retryAfter = error.headers?.['retry-after']
      return refusal('MCP_EDGE_AUTH_UNAVAILABLE', 'Service Unavailable: access tokens cannot be checked now; retry later', retryAfter === undefined ? {} : { retryAfter })
    }
    const reference = randomUUID()
    this.#logger.error({ err: error, reference, route: this.location }, 'token verification failed')
    return this.#invalid(`The access token could not be checked (reference ${reference})`)
  }
}

/** The component a request uses, as [kind, name], or undefined when it uses none. */
function componentOf(registry: Registry, method: string | undefined, params: JsonObject, search: boolean): readonly [ComponentKind, string] | undefined {
  switch (method) {
    case 'tools/call':
      return typeof params.name === 'string' ? ['tool', calledTool(params, search)!] : undefined
    case 'prompts/get':
      return typeof params.name === 'string' ? ['prompt', params.name] : undefined
    case 'resources/read': {
      if (typeof params.uri !== 'string') return undefined
      const resolved = registry.resolveResource(params.uri)
      if (resolved === undefined) return undefined
      return resolved.kind === 'resource' ? ['resource', resolved.entry.resource.uri] : ['template', resolved.entry.template.uriTemplate]
    }
    case 'completion/complete': {
      const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined
      if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') return ['prompt', ref.name]
      if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') return ['template', ref.uri]
      return undefined
    }
    default:
      return undefined
  }
}

/** A value safe inside a quoted-string of a challenge (RFC 9110): no quotes, backslashes or controls. */
function quotable(text: string): string {
  return text.replace(/["\\\u0000-\u001f\u007f]/g, "'")
}
