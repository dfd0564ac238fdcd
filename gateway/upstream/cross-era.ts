/**
 * A stateless (2026-07-28) client's call through a proxy route to an upstream that speaks only
 * 2025-11-25 (a session): the upstream's questions become input-required rounds, and the upstream
 * call is parked between them, not run again.
 *
 *   call ─► park P on this worker ─► upstream call ─► result ─────────────────► complete result
 *                                        └► question ─► input_required, requestState {park: P@worker, round}
 *   retry (any worker) ─► P here? ─► answer, go on ─► result | next question
 *                           │ no: over the bus to P's worker (cross-era-bus.ts)
 *                           └ P gone (its worker restarted, or the client was too slow): the call runs
 *                             again, and the upstream's questions are answered from the answers so far
 */
import type { Logger } from 'pino'
import { RpcError, TimeoutError, TransportError } from '../client/errors.ts'
import type { RouteConfig, UpstreamConfig } from '../config/types.ts'
import type { RequestContext } from '../registry/context.ts'
import type { ParkOutcome } from '../store/bus-message.ts'
import type { SessionRecord, SessionStore, UpstreamSession } from '../store/store.ts'
import { EdgeCode, McpError, RpcCode } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { GONE, ParkBus } from './cross-era-bus.ts'
import { urlAccepted, urlElicitations } from './cross-era-errors.ts'
import { ParkingLot, type RoundSink } from './cross-era-park.ts'
import type { UpstreamLink } from './upstream-link.ts'

/** The methods that may answer input_required (MCP 2026-07-28 multi round-trip requests). */
const PARKABLE: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read'])
/** The upstream call's own timer stays out of the way: rounds and parking have their deadlines here. */
const NO_TIMER_MS = 2 ** 31 - 1

/** What this module keeps in the gateway's signed requestState. */
interface CrossEraState {
  /** The parked call: its worker, id and the round the retry answers. */
  park?: { w: string; id: string; r: number }
  /** Every answer so far, for a replay when the parked call is gone. */
  answers?: JsonObject
  /** The previous round asked URL elicitations the upstream required (-32042). */
  url?: true
}

/** True for a stateless request that may be parked (the others never ask the client anything). */
export function parkable(record: SessionRecord, method: string, ctx: RequestContext | undefined): ctx is RequestContext {
  return record.id === '' && ctx !== undefined && PARKABLE.has(method)
}

export class CrossEra {
  readonly #lots = new Map<string, ParkingLot>()
  readonly #bus: ParkBus
  readonly #route: RouteConfig
  readonly #logger: Logger

  constructor(store: SessionStore, route: RouteConfig, logger: Logger) {
    this.#route = route
    this.#logger = logger
    for (const upstream of route.upstreams) this.#lots.set(upstream.name, new ParkingLot(upstream.max_parked))
    this.#bus = new ParkBus(store.bus, route.location, (id) => this.#find(id))
  }

  /** Calls waiting for their clients on this worker, per upstream (for tests and /readyz-like reports). */
  parked(upstream: string): number {
    return this.#lots.get(upstream)?.size ?? 0
  }

  /**
   * One round of a stateless client's call on `link` (a 2025 session): the result, an
   * input-required result carrying the park in `ctx`'s next requestState, or the upstream's error.
   */
  async call(link: UpstreamLink, upstream: UpstreamConfig, record: SessionRecord, method: string, params: JsonObject, ctx: RequestContext, roundMs: number, stored: UpstreamSession | undefined): Promise<JsonObject> {
    const state = (ctx.requestState ?? {}) as CrossEraState
    const given = typeof params.inputResponses === 'object' && params.inputResponses !== null ? (params.inputResponses as JsonObject) : {}
    const answers = { ...state.answers, ...given }
    const principal = ctx.caller.principal
    const sink: RoundSink = { progress: (p, total, message) => void ctx.progress(p, total, message), log: (level, data, logger) => ctx.log(level, data, logger) }
    let known: JsonObject = {}
    if (state.url === true && !urlAccepted(given)) {
      throw new McpError(RpcCode.InvalidParams, `Upstream "${upstream.name}" needs the URL elicitation it asked for, which the client did not accept`)
    }
    if (state.park !== undefined) {
      const { w, id, r } = state.park
      const lot = this.#lots.get(upstream.name)!
      const outcome = w === this.#bus.worker
        ? lot.resume(id, r, principal, given, sink, ctx.signal)
        : await this.#bus.resume(w, id, r, principal, given, sink, ctx.signal, this.#route.producer_timeout * 1000, roundMs)
      if (outcome !== GONE) return this.#settle(await outcome, ctx, w, id, answers)
      this.#logger.info({ upstream: upstream.name, park: id }, 'a parked call is gone (its worker stopped, or the client retried too late); it runs again with the answers so far')
      known = answers
    }
    const lot = this.#lots.get(upstream.name)!
    const call = lot.open(principal, record.clientCapabilities, { roundMs, parkMs: this.#route.read_timeout * 1000 }, known)
    // An RpcError: the client gets this error as it is (not an "upstream unavailable" result).
    if (call === undefined) throw new RpcError(EdgeCode.MCP_EDGE_TOO_MANY_PARKED.rpc, EdgeCode.MCP_EDGE_TOO_MANY_PARKED.message)
    const sent = upstreamParams(params)
    const run = (): Promise<JsonObject> => link.request(method, sent, {
      timeoutMs: NO_TIMER_MS,
      signal: call.signal,
      context: call,
      onProgress: (progress, total, message) => call.progress(progress, total, message),
    }, stored)
    return this.#settle(await call.start(run, sink, ctx.signal), ctx, this.#bus.worker, call.id, answers)
  }

  close(): void {
    this.#bus.close()
    for (const lot of this.#lots.values()) lot.close()
  }

  #find(id: string): ParkingLot | undefined {
    for (const lot of this.#lots.values()) if (lot.get(id) !== undefined) return lot
    return undefined
  }

  /** A round's outcome as the stateless client gets it. */
  #settle(outcome: ParkOutcome, ctx: RequestContext, worker: string, id: string, answers: JsonObject): JsonObject {
    switch (outcome.kind) {
      case 'result':
        return outcome.result
      case 'input':
        ctx.setRequestState({ park: { w: worker, id, r: outcome.round }, answers } satisfies CrossEraState)
        return { resultType: 'input_required', inputRequests: outcome.inputRequests }
      case 'error': {
        const inputRequests = outcome.code === RpcCode.UrlElicitationRequired ? urlElicitations(outcome.data) : undefined
        if (inputRequests === undefined) throw new RpcError(outcome.code, outcome.message, outcome.data)
        ctx.setRequestState({ url: true, answers } satisfies CrossEraState)
        return { resultType: 'input_required', inputRequests }
      }
      case 'failure':
        throw outcome.timeout ? new TimeoutError(outcome.message, outcome.timeoutMs ?? 0) : new TransportError(outcome.message)
    }
  }
}

/** The client's params as the 2025 upstream gets them: no inputResponses, no requestState. */
function upstreamParams(params: JsonObject): JsonObject {
  if (params.inputResponses === undefined && params.requestState === undefined) return params
  const { inputResponses, requestState, ...rest } = params
  void inputResponses
  void requestState
  return rest
}
