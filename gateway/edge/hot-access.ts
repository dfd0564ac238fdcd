/**
 * The access phase of a protected route for the hot path (transport/hot-post.ts), the same decisions
 * access-hook.ts makes on Fastify's path, in the same order, without Fastify's request:
 *
 *   headers: credential ─► identity (a refusal, or a check still pending: Fastify's path takes the request)
 *      └ no access module, no component scopes: decide now (a refusal: Fastify's path, which answers it)
 *   body parsed: access module (method, tool) ─► Caller ─► the component's scopes ─► a refusal is answered here
 *
 * Nothing the access module decides is asked twice: it runs only once the hot path keeps the request.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Logger } from 'pino'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import { calledTool } from '../wire/called-tool.ts'
import type { EdgeError } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { METADATA_PREFIX, refusalError } from './access-hook.ts'
import type { Caller } from './caller.ts'
import type { Identity } from './jwt-verifier.ts'
import { isRefusal, type Refusal, type RequestFacts, type RouteAccess } from './route-access.ts'

/** What the headers told: the identity, and the caller when nothing after the body can change it. */
export interface EarlyAccess {
  readonly identity: Identity | null
  readonly caller: Caller | undefined
}

/**
 * A refusal once the body is read: the error to answer with, and the caller when one was known (a
 * component's scopes refuse a caller the access phase admitted: its audit record names it, as on
 * Fastify's path; an access refusal has none).
 */
export class HotRefusal {
  readonly error: EdgeError
  readonly caller: Caller | undefined

  constructor(error: EdgeError, caller: Caller | undefined) {
    this.error = error
    this.caller = caller
  }
}

/** The request the late decision is about. */
export interface AccessedRequest {
  readonly headers: IncomingHttpHeaders
  readonly address: string
  readonly method: string
  readonly params: JsonObject | undefined
}

export class HotAccess {
  readonly #access: RouteAccess
  readonly #endpoint: McpEndpoint
  readonly #logger: Logger
  /** POSTs are decided once the body is read: an access module wants the method and tool, components their scopes. */
  readonly #afterBody: boolean

  constructor(endpoint: McpEndpoint, access: RouteAccess) {
    this.#access = access
    this.#endpoint = endpoint
    this.#logger = endpoint.logger
    this.#afterBody = access.hasModule || endpoint.scopes !== undefined
  }

  /** From the headers alone; undefined when Fastify's path must take the request (refused, or a key fetch pending). */
  early(headers: IncomingHttpHeaders, address: string): EarlyAccess | undefined {
    const identity = this.#access.identify(headers)
    if (identity instanceof Promise || isRefusal(identity)) return undefined
    if (this.#afterBody) return { identity, caller: undefined }
    const verdict = this.#access.decide(identity, facts(headers, address, undefined, undefined))
    if (verdict instanceof Promise || isRefusal(verdict)) return undefined
    return { identity, caller: verdict }
  }

  /** Once the body is read: the caller, or the refusal to answer with (logged as Fastify's path logs it). */
  late(early: EarlyAccess, request: AccessedRequest): Caller | HotRefusal | Promise<Caller | HotRefusal> {
    if (early.caller !== undefined) return early.caller
    const { params } = request
    const named = request.method === 'tools/call' ? calledTool(params, this.#endpoint.route.catalogue === 'search') : params?.name ?? params?.uri
    const verdict = this.#access.decide(early.identity, facts(request.headers, request.address, request.method, typeof named === 'string' ? named : undefined))
    if (verdict instanceof Promise) return verdict.then((settled) => this.#conclude(early, request, settled))
    return this.#conclude(early, request, verdict)
  }

  #conclude(early: EarlyAccess, request: AccessedRequest, verdict: Caller | Refusal): Caller | HotRefusal {
    if (isRefusal(verdict)) {
      this.#logger.info({ principal: early.identity?.principal, status: verdict.status, reason: verdict.message, method: 'POST' }, 'access refused')
      return new HotRefusal(this.#refusal(request, verdict), undefined)
    }
    const refused = this.#access.checkComponent(this.#endpoint.scopes, this.#endpoint.registry, verdict, request.method, request.params)
    if (refused === undefined) return verdict
    this.#logger.info({ principal: verdict.principal, status: refused.status, reason: refused.message }, 'access refused')
    return new HotRefusal(this.#refusal(request, refused), verdict)
  }

  #refusal(request: AccessedRequest, refused: Refusal): EdgeError {
    const location = this.#access.location
    return refusalError(this.#access, refused, `http://${request.headers.host ?? ''}${METADATA_PREFIX}${location === '/' ? '' : location}`)
  }
}

function facts(headers: IncomingHttpHeaders, address: string, method: string | undefined, tool: string | undefined): RequestFacts {
  return { httpMethod: 'POST', method, tool, headers, address, transport: 'streamable_http' }
}
