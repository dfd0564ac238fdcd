/**
 * A route's rate limits and quotas on a message channel (a WebSocket connection): the same rules and
 * counters as on HTTP (edge/limits.ts), answered in JSON-RPC alone, since a channel has no status
 * line and no Retry-After header (the wait is in the error's `data.retryAfterMs`).
 *
 *   request ─► slot of its session (this process) ─► rate rules ─► run (slot given back when it settles)
 *     ─► over a transport rule or the slot: a JSON-RPC error with the request's id (-32000, data)
 *     ─► over a tool's rule: a tools/call result { isError, structuredContent: { retryAfterMs, limit, scope } }
 *   initialize ─► the new session counted under its principal (or address) ─► over: deleted, -32000
 */
import { limitRefusal, sessionQuotaRefusal, toolLimitResult, type LimitOutcome, type RouteLimits } from '../edge/limits.ts'
import { limitDecision } from '../events/refused-call.ts'
import type { Caller } from '../wire/caller.ts'
import { calledTool } from '../wire/called-tool.ts'
import { errorMessage, resultMessage, type JsonRpcRequest, type JsonRpcResponse } from '../wire/jsonrpc.ts'

/** A request let through (`release` gives its session slot back once it settles), or the answer that refuses it. */
export type Admission = { answer?: undefined; release: (() => void) | undefined } | { answer: JsonRpcResponse; decision: string }

const ADMITTED: Admission = { release: undefined }

export class ChannelLimits {
  readonly #limits: RouteLimits
  readonly #caller: Caller
  readonly #search: boolean

  /** `search`: the route is in search mode (call_tool counts as the tool it calls). */
  constructor(limits: RouteLimits, caller: Caller, search = false) {
    this.#search = search
    this.#limits = limits
    this.#caller = caller
  }

  /** Counts `request` of session `sessionId` (undefined for a stateless request, which holds no slot). */
  admit(request: JsonRpcRequest, sessionId: string | undefined): Admission | Promise<Admission> {
    const limits = this.#limits
    const name = request.method === 'tools/call' ? calledTool(request.params, this.#search) : undefined
    const outcome = limits.check(limits.needsCaller ? this.#caller : undefined, sessionId, name)
    if (outcome instanceof Promise) return outcome.then((settled) => this.#admission(request, sessionId, settled))
    return this.#admission(request, sessionId, outcome)
  }

  /** The route's limits, for a full route's fair share (session-door.ts's openSession). */
  get route(): RouteLimits {
    return this.#limits
  }

  /** Counts a new session under its creator; the refusal to answer when it is one too many. */
  async admitSession(request: JsonRpcRequest, sessionId: string): Promise<JsonRpcResponse | undefined> {
    if (await this.#limits.admitSession(this.#caller, sessionId)) return undefined
    const refusal = sessionQuotaRefusal(this.#limits.sessionsPerPrincipal)
    return errorMessage(request.id, refusal.rpcCode, refusal.message, refusal.data)
  }

  #admission(request: JsonRpcRequest, sessionId: string | undefined, outcome: LimitOutcome): Admission {
    if (outcome === false) return ADMITTED
    if (outcome === true) return { release: () => this.#limits.done(sessionId!) }
    if (outcome.kind === 'tool') return { answer: resultMessage(request.id, toolLimitResult(outcome)), decision: 'rate_limit' }
    const refusal = limitRefusal(outcome)
    return { answer: errorMessage(request.id, refusal.rpcCode, refusal.message, refusal.data), decision: limitDecision(outcome) }
  }
}
