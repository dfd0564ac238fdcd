/**
 * An `openapi:` upstream as the proxy route sees any upstream: it answers the MCP requests a proxy
 * forwards (tools/list from its catalog, tools/call as one REST request, ping; empty lists of the
 * rest) without a session, a handshake or a connection of its own.
 *
 *   tools/call {name, arguments} ─► validate arguments ─► build request ─► + headers, credential (never the caller's token)
 *        ─► base URL only ─► exchangeWithin (timeout, bytes, redirects) ─► callResult | failureResult
 *
 * Every failure of a call (bad arguments, 4xx, 5xx, timeout, unreachable) is an `isError` result
 * naming the upstream, for the model to read; only an unknown tool name or method is a JSON-RPC error.
 */
import { RpcError } from '../../client/errors.ts'
import { addTraceHeaders } from '../../client/trace-headers.ts'
import type { HttpExchange } from '../../client/http-answer.ts'
import type { UpstreamConfig } from '../../config/types.ts'
import { describeErrors } from '../../registry/json-schema.ts'
import type { AbortLike } from '../../wire/abort-like.ts'
import type { Caller } from '../../wire/caller.ts'
import { RpcCode } from '../../wire/errors.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import { upstreamTls } from '../connect.ts'
import { CredentialError, isFixed, type CredentialProvider } from '../credentials/provider.ts'
import { ArgumentProblem, buildRequest } from './build-request.ts'
import { callResult, failureResult } from './call-result.ts'
import { loadedCatalog, type OpenApiCatalog } from './catalog.ts'
import { exchangeWithin, RestFailure, restExchange, type RestAnswer } from './rest-exchange.ts'

/** Per-call options, as the proxy route gives them. */
export interface OpenApiCallOptions {
  readonly timeoutMs: number
  readonly signal?: AbortLike | undefined
  /** Whom the call is for: the credential provider's `who`. */
  readonly who?: Caller | undefined
}

const EMPTY_LISTS: Readonly<Record<string, JsonObject>> = {
  'prompts/list': { prompts: [] },
  'resources/list': { resources: [] },
  'resources/templates/list': { resourceTemplates: [] },
}

const ACCEPT = 'application/json, */*;q=0.8'

/** One `openapi:` upstream of a route: its catalog (loaded before), its credential, its connections. */
export class OpenApiUpstream {
  readonly #upstream: UpstreamConfig
  readonly #catalog: OpenApiCatalog
  readonly #credentials: CredentialProvider
  readonly #exchange: HttpExchange
  readonly #list: JsonObject
  /** The base URL's path without its trailing slash: every operation's path goes under it. */
  readonly #prefix: string

  constructor(upstream: UpstreamConfig, credentials: CredentialProvider) {
    this.#upstream = upstream
    this.#catalog = loadedCatalog(upstream)
    this.#credentials = credentials
    this.#exchange = restExchange(upstreamTls(upstream))
    this.#list = { tools: this.#catalog.listed }
    this.#prefix = this.#catalog.base.pathname.replace(/\/+$/, '')
  }

  /** The answer to one forwarded MCP request; rejects with RpcError for what an API has not. */
  async request(method: string, params: JsonObject, options: OpenApiCallOptions): Promise<JsonObject> {
    if (method === 'tools/call') return this.#call(params, options)
    if (method === 'tools/list') return this.#list
    if (method === 'ping' || method === 'logging/setLevel') return {}
    const empty = EMPTY_LISTS[method]
    if (empty !== undefined) return empty
    throw new RpcError(RpcCode.MethodNotFound, `Method not found: ${method} (upstream "${this.#upstream.name}" is a REST API)`)
  }

  async #call(params: JsonObject, options: OpenApiCallOptions): Promise<JsonObject> {
    const name = String(params.name)
    const operation = this.#catalog.byName.get(name)
    if (operation === undefined) throw new RpcError(RpcCode.InvalidParams, `Unknown tool: ${name}`)
    const upstream = this.#upstream.name
    const args = (typeof params.arguments === 'object' && params.arguments !== null && !Array.isArray(params.arguments) ? params.arguments : {}) as JsonObject
    let validators
    try {
      validators = this.#catalog.validators(name)
    } catch (error) {
      // `check` compiles every schema; a start without it finds out here, for this tool only.
      return failureResult(upstream, operation.operationId, `its schema cannot be used: ${(error as Error).message}`)
    }
    if (!validators.input(args)) return failureResult(upstream, operation.operationId, `invalid arguments: ${describeErrors(validators.input.errors)}`)
    let built
    try {
      built = buildRequest(operation, args)
    } catch (error) {
      if (error instanceof ArgumentProblem) return failureResult(upstream, operation.operationId, `invalid arguments: ${error.message}`)
      throw error
    }
    const base = this.#catalog.base
    const url = new URL(`${base.origin}${this.#prefix}${built.pathAndQuery}`)
    // Defence in depth: whatever the arguments were, the request stays on the base URL's origin and path.
    if (url.origin !== base.origin || !url.pathname.startsWith(`${this.#prefix}/`)) return failureResult(upstream, operation.operationId, 'invalid arguments: the request would leave the API\'s base URL')
    const send = async (): Promise<RestAnswer> => {
      const credential = this.#credentials.headers(options.who)
      // The API's own parameters first: the upstream's headers and credential are never overridden by them.
      const headers: Record<string, string> = {
        ...built.headers,
        ...this.#upstream.headers,
        ...(credential instanceof Promise ? await credential : credential),
        accept: ACCEPT,
        'user-agent': 'mcp-edge',
      }
      // The call's W3C trace context, as any HTTP hop of the gateway carries it.
      addTraceHeaders(headers, params)
      return exchangeWithin(this.#exchange, url, operation.method, headers, built.body, {
        timeoutMs: options.timeoutMs,
        maxBytes: this.#upstream.openapi!.max_response_bytes,
        maxRedirects: this.#upstream.openapi!.max_redirects,
        origin: base.origin,
        signal: options.signal,
      })
    }
    try {
      let answer = await send()
      // A credential of the gateway's (a token) refused: the provider drops it and may say to try a fresh one, once.
      if (answer.status === 401 && !isFixed(this.#credentials) && (await this.#credentials.rejected(options.who, undefined)) === 'retry') answer = await send()
      return callResult(answer, upstream, operation.operationId, validators.output)
    } catch (error) {
      if (error instanceof RestFailure) return failureResult(upstream, operation.operationId, error.message)
      // The credential could not be had (its own error names the upstream, without secrets).
      if (error instanceof CredentialError) return failureResult(upstream, operation.operationId, error.message)
      throw error
    }
  }
}
