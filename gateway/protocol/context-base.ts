/**
 * What every request's `ctx` shares, whichever wire it came on: the lazily made AbortSignal, the
 * cancellation that fires it, progress and log notifications on the request's own stream.
 */
import type { RequestId } from '../wire/jsonrpc.ts'
import { notification } from '../wire/jsonrpc.ts'
import type { InFlight } from './live-sessions.ts'
import type { JsonObject, LogLevel } from '../wire/mcp-types.ts'
import { LOG_LEVELS } from '../wire/mcp-types.ts'
import type { RequestSink } from './sink.ts'
import type { Caller } from '../wire/caller.ts'
import { LightAbort, type AbortLike } from '../wire/abort-like.ts'

const levelRank = new Map<string, number>(LOG_LEVELS.map((level, rank) => [level, rank]))

/** True when a message at `level` passes the minimum level (no minimum: everything passes). */
export function levelPasses(level: LogLevel, minimum: LogLevel | undefined): boolean {
  return minimum === undefined || (levelRank.get(level) ?? 0) >= (levelRank.get(minimum) ?? 0)
}

export abstract class ContextBase implements InFlight {
  readonly requestId: RequestId
  readonly _meta: JsonObject | undefined
  protected readonly sink: RequestSink
  readonly caller: Caller
  #abort: LightAbort | undefined
  #cancelReason: string | undefined

  constructor(requestId: RequestId, meta: JsonObject | undefined, sink: RequestSink, caller: Caller) {
    this.requestId = requestId
    this._meta = meta
    this.sink = sink
    this.caller = caller
  }

  /** The sink itself, for the call's own record (events/call-record.ts); not part of the handler API. */
  get requestSink(): RequestSink {
    return this.sink
  }

  /** Made on first read: most handlers never look at it, and most requests are never cancelled. */
  get signal(): AbortSignal {
    return this.cancellation.signal
  }

  /**
   * The request's cancellation for the gateway's own layers (a proxy route passes it upstream): an
   * AbortLike without an AbortController behind it until someone reads `signal`.
   */
  get cancellation(): AbortLike & { readonly signal: AbortSignal } {
    if (this.#abort === undefined) {
      this.#abort = new LightAbort()
      if (this.#cancelReason !== undefined) this.#abort.abort(this.#cancelReason)
    }
    return this.#abort
  }

  get cancelled(): boolean {
    return this.#cancelReason !== undefined
  }

  cancel(reason: string): void {
    if (this.#cancelReason !== undefined) return
    this.#cancelReason = reason
    this.#abort?.abort(reason)
  }

  progress(progress: number, total?: number, message?: string): boolean {
    if (this.#cancelReason !== undefined) return false
    const token = this._meta?.progressToken
    if (typeof token !== 'string' && typeof token !== 'number') return true
    const params: JsonObject = { progressToken: token, progress }
    if (total !== undefined) params.total = total
    if (message !== undefined) params.message = message
    this.sink.send(notification('notifications/progress', params))
    return true
  }

  /** Sends `notifications/message` unless cancelled or below `minimum` (`null`: send nothing). */
  protected notifyLog(level: LogLevel, data: unknown, logger: string | undefined, minimum: LogLevel | undefined | null): void {
    if (minimum === null || this.#cancelReason !== undefined || !levelPasses(level, minimum)) return
    const params: JsonObject = { level, data }
    if (logger !== undefined) params.logger = logger
    this.sink.send(notification('notifications/message', params))
  }
}
