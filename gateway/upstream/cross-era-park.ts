/**
 * A parked upstream call: a stateless (2026-07-28) client's tools/call, prompts/get or resources/read
 * running on a 2025-11-25 upstream session, which asks the client something (elicitation, sampling,
 * roots) mid-call. The stateless client cannot take a server→client request, so the upstream's
 * request is held open, the client gets an input-required result, and its retry answers the held
 * request: the upstream call goes on where it stopped instead of running again.
 *
 *   round 1:  call ─► upstream ─► elicitation/create ─► held (key "elicitation-0") ─► input_required
 *   parked:   the upstream call waits (park_timeout); nothing else runs
 *   round 2:  retry + inputResponses ─► held request answered ─► upstream goes on ─► result | next input
 *
 * A call lives in this process only (its upstream connection does); a retry landing on another
 * process reaches it over the bus (cross-era-bus.ts).
 */
import { ConsentRequiredError, CredentialError } from './credentials/provider.ts'
import { randomUUID } from 'node:crypto'
import { CancelledError, RpcError, TimeoutError } from '../client/errors.ts'
import type { ParkOutcome } from '../store/bus-message.ts'
import { McpError, RpcCode } from '../wire/errors.ts'
import type { ClientCapabilities, JsonObject, LogLevel } from '../wire/mcp-types.ts'

/** Where a round's progress and log notifications go while it runs. */
export interface RoundSink {
  progress(progress: number, total?: number, message?: string): void
  log(level: LogLevel, data: unknown, logger: string): void
}

/** How long things may take, in milliseconds. */
export interface ParkTimes {
  /** One round: from the call (or the retry) to its result or its next question. */
  roundMs: number
  /** Parked: from the input-required result to the client's retry. */
  parkMs: number
}

interface Held {
  method: string
  params: JsonObject
  resolve(result: JsonObject): void
  reject(error: Error): void
}

type AnswerCheck = (answer: unknown) => boolean
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value)
const CHECKS: Readonly<Record<string, AnswerCheck>> = {
  'elicitation/create': (answer) => isObject(answer) && ['accept', 'decline', 'cancel'].includes(answer.action as string),
  'sampling/createMessage': (answer) => isObject(answer) && answer.content !== undefined,
  'roots/list': (answer) => isObject(answer) && Array.isArray(answer.roots),
}
const KIND: Readonly<Record<string, string>> = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' }

/** The upstream request's params as a 2026-07-28 input request: no `_meta`, no `elicitationId` (removed in 2026). */
function inputParams(method: string, params: JsonObject): JsonObject {
  const { _meta, ...rest } = params
  void _meta
  if (method === 'elicitation/create' && rest.mode === 'url') delete rest.elicitationId
  return rest
}

/** The capability the client must have declared for `method` (else the upstream gets -32601, as from a 2025 client). */
function declared(method: string, params: JsonObject, capabilities: ClientCapabilities): boolean {
  if (method === 'sampling/createMessage') return capabilities.sampling !== undefined
  if (method === 'roots/list') return capabilities.roots !== undefined
  const elicitation = capabilities.elicitation
  if (elicitation === undefined) return false
  return params.mode === 'url' ? elicitation.url !== undefined : elicitation.form !== undefined || elicitation.url === undefined
}

export class ParkedCall {
  readonly id: string = randomUUID()
  readonly principal: string | undefined
  /** Rounds answered so far; a retry must name the current one (a requestState is good once). */
  round = 0
  readonly #capabilities: ClientCapabilities
  readonly #times: ParkTimes
  readonly #controller = new AbortController()
  readonly #held = new Map<string, Held>()
  /** Answers known before the upstream asks (a replay after the owning process went away). */
  readonly #known: JsonObject
  readonly #onEnd: (call: ParkedCall, answered: boolean) => void
  #asked = 0
  #sink: RoundSink | undefined
  #waiter: ((outcome: ParkOutcome) => void) | undefined
  #ended: ParkOutcome | undefined
  #flush: NodeJS.Immediate | undefined
  #timer: NodeJS.Timeout | undefined
  #detach: (() => void) | undefined

  constructor(principal: string | undefined, capabilities: ClientCapabilities, times: ParkTimes, known: JsonObject, onEnd: (call: ParkedCall, answered: boolean) => void) {
    this.principal = principal
    this.#capabilities = capabilities
    this.#times = times
    this.#known = known
    this.#onEnd = onEnd
  }

  /** True while a round runs (between a call or retry and its outcome). */
  get running(): boolean {
    return this.#waiter !== undefined
  }

  /** Aborted when the call is given up (client gone, deadline passed): the upstream request is cancelled. */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** Runs the upstream call; resolves with the first round's outcome. */
  start(run: () => Promise<JsonObject>, sink: RoundSink, cancel: AbortSignal | undefined): Promise<ParkOutcome> {
    const outcome = this.#round(sink, cancel)
    run().then(
      (result) => this.#deliver({ kind: 'result', result }),
      (error: unknown) => this.#deliver(this.#failure(error)),
    )
    return outcome
  }

  /** Answers what the upstream asked with the client's `answers`; resolves with the next outcome. */
  resume(answers: JsonObject, sink: RoundSink, cancel: AbortSignal | undefined): Promise<ParkOutcome> {
    clearTimeout(this.#timer)
    const outcome = this.#round(sink, cancel)
    if (this.#ended !== undefined) {
      this.#deliver(this.#ended)
      return outcome
    }
    for (const [key, held] of this.#held) {
      const answer = answers[key]
      if (answer === undefined || !CHECKS[held.method]!(answer)) continue
      this.#held.delete(key)
      held.resolve(answer as JsonObject)
    }
    // Unanswered questions are asked again (after the answers given had their effect).
    if (this.#held.size > 0) this.#scheduleFlush()
    return outcome
  }

  /** The upstream's request, held until the client's retry answers it. */
  ask(method: string, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    if (!declared(method, params, this.#capabilities)) {
      return Promise.reject(new McpError(RpcCode.MethodNotFound, `The client did not declare the capability ${method} needs`))
    }
    const key = `${KIND[method]}-${this.#asked++}`
    const known = this.#known[key]
    if (known !== undefined && CHECKS[method]!(known)) return Promise.resolve(known as JsonObject)
    return new Promise<JsonObject>((resolve, reject) => {
      this.#held.set(key, { method, params: inputParams(method, params), resolve, reject })
      // The upstream took its question back (it cancelled, or its own deadline passed).
      signal.addEventListener('abort', () => {
        if (this.#held.delete(key)) reject(new CancelledError('the upstream cancelled its request'))
      }, { once: true })
      this.#scheduleFlush()
    })
  }

  /** A log message of the upstream call, for the round running now (none between rounds). */
  log(level: LogLevel, data: unknown, logger: string): void {
    this.#sink?.log(level, data, logger)
  }

  progress(progress: number, total?: number, message?: string): void {
    this.#sink?.progress(progress, total, message)
  }

  /** Gives the call up: the upstream request is cancelled and the waiting round (if any) gets `reason`. */
  cancel(reason: string): void {
    if (!this.#controller.signal.aborted) this.#expire(reason, undefined)
  }

  #round(sink: RoundSink, cancel: AbortSignal | undefined): Promise<ParkOutcome> {
    this.#sink = sink
    const outcome = new Promise<ParkOutcome>((resolve) => (this.#waiter = resolve))
    this.#timer = setTimeout(() => this.#expire(`the upstream gave no answer within ${this.#times.roundMs} ms`, this.#times.roundMs), this.#times.roundMs)
    if (cancel !== undefined) {
      const onAbort = (): void => this.cancel('the client closed the response stream')
      if (cancel.aborted) queueMicrotask(onAbort)
      else cancel.addEventListener('abort', onAbort, { once: true })
      this.#detach = () => cancel.removeEventListener('abort', onAbort)
    }
    return outcome
  }

  /** Several questions asked at once go out in one input-required result. */
  #scheduleFlush(): void {
    if (this.#flush !== undefined || this.#waiter === undefined) return
    this.#flush = setImmediate(() => {
      this.#flush = undefined
      if (this.#held.size === 0 || this.#waiter === undefined) return
      const inputRequests: JsonObject = {}
      for (const [key, held] of this.#held) inputRequests[key] = { method: held.method, params: held.params }
      this.round++
      this.#deliver({ kind: 'input', inputRequests, round: this.round })
    })
  }

  #deliver(outcome: ParkOutcome): void {
    const waiter = this.#waiter
    if (waiter === undefined) {
      // The call ended while parked (the upstream's own deadline): the retry gets this; the park deadline still runs.
      if (outcome.kind !== 'input') this.#ended ??= outcome
      return
    }
    clearTimeout(this.#timer)
    this.#detach?.()
    this.#detach = undefined
    this.#sink = undefined
    this.#waiter = undefined
    if (outcome.kind === 'input') {
      this.#timer = setTimeout(() => this.#expire(`the client did not retry within ${this.#times.parkMs} ms`, undefined), this.#times.parkMs)
      waiter(outcome)
      return
    }
    this.#end(true)
    waiter(outcome)
  }

  /** Gives the call up; `timeoutMs` when a deadline passed (the waiting round reports a timeout). */
  #expire(reason: string, timeoutMs: number | undefined): void {
    this.#detach?.()
    this.#detach = undefined
    this.#controller.abort(reason)
    const waiter = this.#waiter
    this.#waiter = undefined
    this.#end(false)
    waiter?.({ kind: 'failure', message: reason, timeout: timeoutMs !== undefined, ...(timeoutMs === undefined ? {} : { timeoutMs }) })
  }

  /** `answered`: the call's outcome reached its client (a replay of its state is refused); otherwise it was given up. */
  #end(answered: boolean): void {
    clearTimeout(this.#timer)
    if (this.#flush !== undefined) clearImmediate(this.#flush)
    for (const held of this.#held.values()) held.reject(new McpError(RpcCode.InternalError, 'The call was given up before the client answered'))
    this.#held.clear()
    this.#onEnd(this, answered)
  }

  #failure(error: unknown): ParkOutcome {
    if (error instanceof RpcError) return { kind: 'error', code: error.code, message: error.message, data: error.data }
    // A consent needed midway (the upstream refused a token): its URL elicitation becomes the next round.
    // The gateway's credential failed midway (a refresh refused, the authorization server down): the client's error, naming the upstream.
    if (error instanceof ConsentRequiredError || error instanceof CredentialError) return { kind: 'error', code: error.rpcCode, message: error.message, data: error.data }
    const message = error instanceof CancelledError && this.#controller.signal.aborted ? String(this.#controller.signal.reason) : (error as Error).message
    return error instanceof TimeoutError ? { kind: 'failure', message, timeout: true, timeoutMs: error.timeoutMs } : { kind: 'failure', message, timeout: false }
  }
}

const USED: ParkOutcome = { kind: 'error', code: RpcCode.InvalidParams, message: 'Invalid requestState: it was used already (each input-required result is answered once)' }

/** A worker's parked calls of one upstream, bounded. */
export class ParkingLot {
  readonly #calls = new Map<string, ParkedCall>()
  /** Calls that ended here lately, until their requestState could no longer be retried: a replayed state is refused, not run again. */
  readonly #ended = new Map<string, number>()
  readonly #max: number

  constructor(max: number) {
    this.#max = max
  }

  get size(): number {
    return this.#calls.size
  }

  /** A new call; undefined when `max` calls are parked here already. */
  open(principal: string | undefined, capabilities: ClientCapabilities, times: ParkTimes, known: JsonObject): ParkedCall | undefined {
    if (this.#calls.size >= this.#max) return undefined
    const call = new ParkedCall(principal, capabilities, times, known, (ended, answered) => {
      if (!this.#calls.delete(ended.id) || !answered) return
      // Bounded like the calls: the oldest mark goes first.
      if (this.#ended.size >= Math.max(this.#max, 1) * 4) this.#ended.delete(this.#ended.keys().next().value!)
      this.#ended.set(ended.id, Date.now() + times.parkMs)
    })
    this.#calls.set(call.id, call)
    return call
  }

  get(id: string): ParkedCall | undefined {
    return this.#calls.get(id)
  }

  /**
   * Resumes a call parked here with the client's answers; 'gone' when no such call waits (it ended,
   * expired, or belongs to another principal). A requestState already used (another round) is refused.
   */
  resume(id: string, round: number, principal: string | undefined, answers: JsonObject, sink: RoundSink, cancel: AbortSignal | undefined): Promise<ParkOutcome> | 'gone' {
    const call = this.#calls.get(id)
    if (call === undefined && (this.#ended.get(id) ?? 0) > Date.now()) return Promise.resolve(USED)
    if (call === undefined || call.principal !== principal) return 'gone'
    if (call.round !== round || call.running) return Promise.resolve(USED)
    return call.resume(answers, sink, cancel)
  }

  /** Gives every call up (the route closes). */
  close(): void {
    for (const call of [...this.#calls.values()]) call.cancel('the gateway is shutting down')
  }
}
