/**
 * The rewrite phase of a route: before access and content, on the hot path and the Fastify path alike
 * (both dispatch through the endpoint, which asks this phase first), for handler and proxy routes. A
 * route with neither `rewrite:` nor `phases.rewrite` has no RewritePhase: its requests and sinks are
 * untouched and it pays nothing.
 *
 *   request ─► rules (the route's `rewrite:`, the module's laid over them) ─► names translated in
 *      │         └► module throws ─► log {ref, err} ─► client: MCP_EDGE_PHASE_FAILED (ref R)
 *      ├► hidden (or a renamed one's old name) ─► the route's own answer for an unknown component
 *      └► the route (scopes, content, filter) ─► list results rewritten on the way out ─► client
 */
import type { Logger } from 'pino'
import type { RewriteConfig } from '../config/types.ts'
import { reportFailure } from '../registry/failure-report.ts'
import type { RequestSink } from '../protocol/sink.ts'
import { EdgeCode, RpcCode } from '../wire/errors.ts'
import { errorMessage, resultMessage, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { CompiledRewrite, layered, LISTS } from './rewrite-rules.ts'

/** What a rewrite module is given for one request. */
export interface RewriteCall {
  readonly route: string
  /** `tools/list`, `tools/call`, `prompts/get`, `resources/read`, `completion/complete`… */
  readonly method: string
  /** The tool or prompt name, or the resource URI, as the client sent it; undefined for a list. */
  readonly component: string | undefined
  /** The caller's `sub`, if known: rules may differ per principal (hide admin tools from others). */
  readonly principal: string | undefined
}

/**
 * Rules in the shape of the route's `rewrite:` (laid over them, per component), or undefined for the
 * route's own. Return the same object for the same rules: they are compiled once per object.
 */
export type RewriteAnswer = RewriteConfig | undefined | void

/** A rewrite module's default export. */
export type RewriteModule = (call: RewriteCall) => RewriteAnswer | Promise<RewriteAnswer>

/** The request as the route serves it and the rules its answer passes, or the refusal to answer with. */
export type RewriteOutcome = { request: JsonRpcRequest; rules: CompiledRewrite } | { refusal: JsonRpcResponse }

/** The methods whose request or answer a rewrite can change; every other passes untouched. */
const REWRITTEN: ReadonlySet<string> = new Set([
  ...LISTS.keys(), 'tools/call', 'prompts/get', 'resources/read', 'resources/subscribe', 'resources/unsubscribe', 'completion/complete',
])

export class RewritePhase {
  readonly #route: string
  readonly #builtin: RewriteConfig | undefined
  readonly #compiledBuiltin: CompiledRewrite | undefined
  readonly #module: RewriteModule | undefined
  readonly #logger: Logger
  /** A proxy route says "Resource not found: URI" where a handler route says "Resource not found". */
  readonly #proxy: boolean
  /** The module's answers, compiled, by identity (a module returning constants compiles each once). */
  readonly #compiled = new WeakMap<RewriteConfig, CompiledRewrite>()

  /** Throws a TypeError when `builtin` renames two components to one name. */
  constructor(route: string, builtin: RewriteConfig | undefined, module: RewriteModule | undefined, proxy: boolean, logger: Logger) {
    this.#route = route
    this.#builtin = builtin
    this.#compiledBuiltin = builtin === undefined ? undefined : new CompiledRewrite(builtin)
    this.#module = module
    this.#proxy = proxy
    this.#logger = logger
  }

  /** True when `method`'s request or answer may change: the others go on as they are. */
  sees(method: string): boolean {
    return REWRITTEN.has(method)
  }

  /** The rewritten request (or the refusal); a promise only when the module returned one. */
  apply(request: JsonRpcRequest, principal: string | undefined): RewriteOutcome | Promise<RewriteOutcome> {
    const module = this.#module
    if (module === undefined) return this.#translate(request, this.#compiledBuiltin!)
    let answer: RewriteAnswer | Promise<RewriteAnswer>
    try {
      answer = module({ route: this.#route, method: request.method, component: componentOf(request), principal })
    } catch (error) {
      return this.#failed(request, error)
    }
    if (answer instanceof Promise) return answer.then((settled) => this.#ruled(request, settled), (error: unknown) => this.#failed(request, error))
    return this.#ruled(request, answer)
  }

  /** `sink`, or one that rewrites the list `request` asks for on its way out. */
  wrap<S extends RequestSink>(sink: S, request: JsonRpcRequest, rules: CompiledRewrite): S {
    if (!LISTS.has(request.method)) return sink
    return new RewriteSink(sink, request.method, rules) as unknown as S
  }

  #ruled(request: JsonRpcRequest, answer: RewriteAnswer): RewriteOutcome {
    if (answer === undefined || answer === null) {
      return this.#translate(request, this.#compiledBuiltin ?? EMPTY)
    }
    if (typeof answer !== 'object' || Array.isArray(answer)) {
      return this.#failed(request, new TypeError(`the rewrite module returned ${typeof answer}, not rules or undefined`))
    }
    let rules = this.#compiled.get(answer)
    if (rules === undefined) {
      try {
        rules = new CompiledRewrite(layered(this.#builtin, answer))
      } catch (error) {
        return this.#failed(request, error)
      }
      this.#compiled.set(answer, rules)
    }
    return this.#translate(request, rules)
  }

  #translate(request: JsonRpcRequest, rules: CompiledRewrite): RewriteOutcome {
    const params = request.params
    if (params === undefined) return { request, rules }
    switch (request.method) {
      case 'tools/call':
      case 'prompts/get': {
        const name = params.name
        if (typeof name !== 'string') return { request, rules }
        const tool = request.method === 'tools/call'
        const original = rules.original(tool ? 'tools' : 'prompts', name)
        if (original === undefined) return { refusal: errorMessage(request.id, RpcCode.InvalidParams, `Unknown ${tool ? 'tool' : 'prompt'}: ${name}`) }
        return { request: original === name ? request : { ...request, params: { ...params, name: original } }, rules }
      }
      case 'resources/read':
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        const uri = params.uri
        if (typeof uri !== 'string' || rules.original('resources', uri) !== undefined) return { request, rules }
        return { refusal: errorMessage(request.id, RpcCode.ResourceNotFound, this.#proxy ? `Resource not found: ${uri}` : 'Resource not found', { uri }) }
      }
      case 'completion/complete': {
        const ref = params.ref as JsonObject | undefined
        if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
          const original = rules.original('prompts', ref.name)
          if (original === undefined) return { refusal: errorMessage(request.id, RpcCode.InvalidParams, `Unknown prompt: ${ref.name}`) }
          if (original !== ref.name) return { request: { ...request, params: { ...params, ref: { ...ref, name: original } } }, rules }
        }
        return { request, rules }
      }
      default:
        return { request, rules }
    }
  }

  #failed(request: JsonRpcRequest, error: unknown): RewriteOutcome {
    const ref = reportFailure(this.#logger, error, { route: this.#route, method: request.method, phase: 'rewrite' }, 'rewrite phase failed')
    const row = EdgeCode.MCP_EDGE_PHASE_FAILED
    return { refusal: errorMessage(request.id, row.rpc, `${row.message} (ref ${ref})`) }
  }
}

const EMPTY = new CompiledRewrite({})

function componentOf(request: JsonRpcRequest): string | undefined {
  const params = request.params
  if (params === undefined) return undefined
  const named = params.name ?? params.uri
  return typeof named === 'string' ? named : undefined
}

/** A list request's sink: its result is rewritten on the way out; everything else goes straight through. */
export class RewriteSink implements RequestSink {
  readonly inner: RequestSink & { onClose?: (listener: () => void) => void }
  readonly #method: string
  readonly #rules: CompiledRewrite

  constructor(inner: RequestSink, method: string, rules: CompiledRewrite) {
    this.inner = inner
    this.#method = method
    this.#rules = rules
  }

  send(message: JsonRpcMessage): void {
    this.inner.send(message)
  }

  /** A stateless sink is told when its client goes: passed on (a method, not a closure per request; see CallRecord). */
  onClose(listener: () => void): void {
    this.inner.onClose?.(listener)
  }

  respond(message: JsonRpcResponse, httpStatus?: number, headers?: Readonly<Record<string, string>>): void {
    if ('result' in message) {
      const result = this.#rules.list(this.#method, message.result)
      if (result !== message.result) message = resultMessage(message.id, result)
    }
    this.inner.respond(message, httpStatus, headers)
  }

  abandon(): void {
    this.inner.abandon()
  }

  detach(retryMs: number): boolean {
    return this.inner.detach(retryMs)
  }
}
