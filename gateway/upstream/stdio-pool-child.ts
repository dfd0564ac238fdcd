/**
 * One child of a stdio upstream, multiplexed: any number of sessions speak to it at once, each as
 * if it had the child to itself. The child sees ids and progress tokens that only this multiplexer
 * hands out, so two sessions that both send id 1 never meet:
 *
 *   session A  id 1 ─┐                       ┌─► id 7 ─► child ─► answer 7 ─► A, id 1
 *   session B  id 1 ─┴─► outbound[7]=(A,1)  ─┤
 *                        outbound[8]=(B,1)  ─┴─► id 8 ─► child ─► answer 8 ─► B, id 1
 *
 *   progress    the child's token is its request id: progress(token 7) ─► A with A's own token
 *   cancel      A cancels 1 ─► notifications/cancelled for 7 (never for B's request)
 *   broadcast   list_changed, log messages ─► every session; resources/updated ─► its subscribers
 *   child→client sampling/elicitation ─► the session whose call caused it: named by the request's
 *                _meta (relatedRequestId, a progress token of ours), else the one session with a call
 *                in flight that may ask (stdio-pool-asks.ts keeps it at one), else it waits until
 *                only one is left; roots/list of a shared child ─► the upstream's configured roots
 *
 * The child is initialized once, by the multiplexer; every session's initialize is answered from
 * that handshake. It is pinged (a child that stops answering is replaced) and stopped when idle.
 */
import type { Logger } from 'pino'
import { RpcCode } from '../wire/errors.ts'
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { StdioUpstreamConfig } from './stdio-pool-config.ts'
import { AskGate } from './stdio-pool-asks.ts'
import { ChildRequestRouter } from './stdio-pool-attribution.ts'
import { ChildRequests } from './stdio-pool-inbound.ts'
import { StdioChildProcess } from './stdio-pool-process.ts'
import { ChildSubscriptions } from './stdio-pool-subscriptions.ts'
import { ChildLiveness } from './stdio-pool-liveness.ts'
import { RootsSettle } from './stdio-pool-roots.ts'
import { prepareFolder, type Launch } from './stdio-pool-state.ts'
import { DISCOVER, DISCOVER_PARAMS, handshakeChild, NotModernError, onlyRequest, type PoolSession } from './stdio-pool-session.ts'

export type { PoolSession } from './stdio-pool-session.ts'

interface Outbound {
  session: PoolSession | undefined
  /** The session's id for this request. */
  id: RequestId
  /** The session's progress token, when it asked for progress. */
  token: unknown
  /** A resources/subscribe in flight: the URI, recorded when the child accepts it. */
  subscribe?: string
  /** The multiplexer's own requests (initialize, ping, unsubscribe). */
  internal?: (message: Record<string, unknown>) => void
  /** A call that may make the child ask the client: its key (method and name), see stdio-pool-asks.ts. */
  ask?: string
  /** Under the one-session rule (not known quiet). */
  gated?: boolean
  /** The child asked the session's client while this call was in flight. */
  asked?: boolean
}

/** Calls that may make a child ask its client (a tool, a prompt, a read run server code). */
const MAY_ASK = new Set(['tools/call', 'prompts/get', 'resources/read'])

const noop = (): void => undefined

/** A running child shared by sessions; `ready` resolves with its initialize result. */
export class PoolChild {
  readonly ready: Promise<JsonObject>
  /** Sessions whose requests go to this child. */
  readonly sessions = new Set<PoolSession>()
  state: 'starting' | 'ready' | 'gone' = 'starting'
  pid: number | undefined
  /** Sessions placed on another (ready) child while this one starts: the pool counts them as this one's. */
  promised = 0
  /** When the handshake completed (for the restart backoff's reset). */
  readySince = 0
  /** The child answered its idle timeout with nothing to do; the pool stops it or keeps it. */
  onidle?: (child: PoolChild) => void
  /**
   * The child is gone; `unexpected` when it crashed, hung or failed to start (not when it was
   * stopped); `served` is how many sessions it had then.
   */
  ondeath?: (child: PoolChild, reason: string, unexpected: boolean, served: number) => void

  readonly #config: StdioUpstreamConfig
  readonly #log: Logger
  readonly #graceMs: number
  #process: StdioChildProcess | undefined
  #stopped: Promise<void> | undefined
  #nextId = 0
  readonly #launch: Launch | undefined
  /** Until the child has its roots (stdio-pool-roots.ts): its first requests wait. */
  #roots: RootsSettle | undefined
  #requestsInFlight = 0
  readonly #outbound = new Map<number, Outbound>()
  /** Sessions with at least one request in flight: the candidates for a server→client request. */
  readonly #busy = new Set<PoolSession>()
  /** The child's requests to sessions' clients, awaiting their answers. */
  readonly #inbound = new ChildRequests<PoolSession>()
  readonly #subscriptions = new ChildSubscriptions()
  /** Calls that may ask run one session at a time: unset in `session` isolation (one session per child). */
  readonly #asks: AskGate<PoolSession> | undefined
  readonly #router: ChildRequestRouter
  readonly #liveness: ChildLiveness

  /** Serves 2026-07-28 requests (started with a discover, never initialized). */
  readonly modern: boolean

  /** `launch`: how to start it when not as `config` says (a unit's own folder, stdio-pool-state.ts). */
  constructor(config: StdioUpstreamConfig, handshake: JsonObject | typeof DISCOVER, log: Logger, graceMs: number, launch?: Launch) {
    this.modern = handshake === DISCOVER
    this.#config = config
    this.#launch = launch
    this.#log = log
    this.#graceMs = graceMs
    this.#asks = config.isolation === 'session' ? undefined : new AskGate()
    const pidOf = (): number | undefined => this.pid
    this.#router = new ChildRequestRouter({
      sessions: this.sessions,
      busy: this.#busy,
      asks: this.#asks,
      roots: config.roots,
      log,
      get pid() {
        return pidOf()
      },
      sessionOf: (childId) => this.#outbound.get(childId)?.session,
      markAsked: (session) => this.#markAsked(session),
      ask: (session, request, params) => this.#ask(session, request, params),
      send: (message) => this.#send(message),
    })
    this.#liveness = new ChildLiveness(config.pool, {
      busy: () => this.#requestsInFlight !== 0 || this.#inbound.size !== 0,
      // Any answer proves the child alive, an error too (a server without ping still reads and writes).
      ping: (timeoutMs) => (this.state !== 'ready' ? Promise.resolve() : this.modern ? this.#request('server/discover', DISCOVER_PARAMS, timeoutMs, true) : this.#request('ping', undefined, timeoutMs, true)),
      idle: () => this.onidle?.(this),
      hung: (reason) => this.#die(reason, true),
    })
    this.ready = this.#boot(handshake)
    this.ready.catch(() => undefined)
  }

  /** Requests of sessions awaiting the child's answer. */
  get requestsInFlight(): number {
    return this.#requestsInFlight
  }

  attach(session: PoolSession): void {
    this.sessions.add(session)
  }

  /** True when the session has nothing under way here (requests, queued calls, the child's requests, subscriptions): it may move. */
  holdsNothingOf(session: PoolSession): boolean {
    return !(session.inFlight.size > 0 || this.#asks?.holds(session) === true || this.#inbound.has(session) || this.#subscriptions.holds(session))
  }

  /** The session leaves: its requests in flight are cancelled at the child, its subscriptions dropped. */
  detach(session: PoolSession): void {
    if (!this.sessions.delete(session)) return
    this.#asks?.leave(session)
    for (const childId of session.inFlight.values()) {
      this.#settle(childId)
      this.#send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: childId, reason: 'the session closed' } })
    }
    for (const childId of this.#inbound.dropSession(session)) {
      this.#send({ jsonrpc: '2.0', id: childId, error: { code: RpcCode.InternalError, message: 'The session closed before it answered' } })
    }
    for (const uri of this.#subscriptions.dropSession(session)) {
      this.#request('resources/unsubscribe', { uri }, this.#config.pool.ping_timeout * 1000).catch(() => undefined)
    }
  }

  /**
   * Sends a session's request to the child under a fresh id (and a fresh progress token); rejects when
   * the child cannot take it. A call that may ask waits while another session has one in flight.
   */
  forward(session: PoolSession, message: JsonRpcRequest): Promise<void> {
    const roots = this.#roots
    if (roots !== undefined) return roots.done.then(() => this.forward(session, message))
    if (session.canBeAsked && this.#asks !== undefined && MAY_ASK.has(message.method)) {
      const key = message.method === 'resources/read' ? message.method : `${message.method}\0${String(message.params?.name)}`
      if (!this.#asks.mayAsk(key)) return this.#dispatch(session, message, key, false)
      if (this.#asks.open(session)) return this.#dispatch(session, message, key, true)
      return new Promise((resolve, reject) => {
        this.#asks!.hold({
          session,
          id: message.id,
          go: () => this.#dispatch(session, message, key, true).then(resolve, reject),
          drop: (error) => (error === undefined ? resolve() : reject(error)),
        })
      })
    }
    return this.#dispatch(session, message, undefined, false)
  }

  #dispatch(session: PoolSession, message: JsonRpcRequest, ask: string | undefined, gated: boolean): Promise<void> {
    let params = message.params
    if (message.method === 'resources/unsubscribe' && this.#subscriptions.unsubscribeLocally(session, String(params?.uri))) {
      queueMicrotask(() => session.deliver({ jsonrpc: '2.0', id: message.id, result: {} }))
      return Promise.resolve()
    }
    if (this.state === 'gone') return Promise.reject(new Error('the child is not running'))
    const childId = ++this.#nextId
    const meta = params?._meta as JsonObject | undefined
    const token = meta?.progressToken
    if (token !== undefined) params = { ...params, _meta: { ...meta, progressToken: childId } }
    const outbound: Outbound = { session, id: message.id, token }
    if (message.method === 'resources/subscribe' && typeof params?.uri === 'string') outbound.subscribe = params.uri
    if (ask !== undefined) {
      outbound.ask = ask
      outbound.gated = gated
      if (gated) this.#asks!.started(session)
    }
    this.#outbound.set(childId, outbound)
    session.inFlight.set(message.id, childId)
    this.#busy.add(session)
    this.#requestsInFlight++
    this.#liveness.lastActivity = Date.now()
    const rewritten: JsonRpcRequest = params === undefined ? { jsonrpc: '2.0', id: childId, method: message.method } : { jsonrpc: '2.0', id: childId, method: message.method, params }
    return this.#write(rewritten).catch((error: unknown) => {
      this.#settle(childId)
      throw error
    })
  }

  /** A session's notification: a cancellation is rewritten to the child's id (or dropped when nothing matches). */
  notify(session: PoolSession, message: JsonRpcNotification): Promise<void> {
    this.#liveness.lastActivity = Date.now()
    if (message.method !== 'notifications/cancelled') {
      // A shared child's roots are the upstream's, not a session's: its roots changing is no news to the child.
      if (message.method === 'notifications/roots/list_changed' && this.#asks !== undefined) return Promise.resolve()
      return this.#write(message)
    }
    const childId = session.inFlight.get(message.params?.requestId as RequestId)
    if (childId === undefined) {
      this.#asks?.cancel(session, message.params?.requestId)
      return Promise.resolve()
    }
    this.#settle(childId)
    return this.#write({ jsonrpc: '2.0', method: message.method, params: { ...message.params, requestId: childId } })
  }

  /** A session's answer to a request the child sent it; dropped unless it answers one sent to this session. */
  answer(session: PoolSession, message: JsonRpcMessage): Promise<void> {
    const childId = this.#inbound.answered(session, (message as { id?: unknown }).id)
    if (childId === undefined) return Promise.resolve()
    this.#liveness.lastActivity = Date.now()
    return this.#write({ ...message, id: childId } as JsonRpcMessage)
  }

  /** Stops the child (idle, session closed, pool closed); resolves when no process of its group is left. */
  stop(reason: string): Promise<void> {
    this.#die(reason, false)
    // A child stopped while its spawn was under way is stopped once it exists: wait for that too.
    return this.ready.then(noop, noop).then(() => this.#stopped)
  }

  /** The pool keeps an idle child (pool.min): wait another idle timeout. */
  keepIdle(): void {
    this.#liveness.keepIdle()
  }

  async #boot(handshake: JsonObject | typeof DISCOVER): Promise<JsonObject> {
    const { max_message_size: maxMessageSize, pool } = this.#config
    const { command, env, cwd } = this.#launch ?? this.#config
    try {
      if (this.#launch !== undefined) await prepareFolder(this.#launch.folder)
      const child = await StdioChildProcess.start({ command, env, cwd, maxMessageSize, log: this.#log })
      this.#process = child
      this.pid = child.pid
      child.onmessage = (message) => this.#receive(message)
      child.onexit = (description) => this.#die(`the process ${description}`, true)
      if (this.state === 'gone') {
        this.#stopped = child.stop(this.#graceMs)
        throw new Error('stopped while starting')
      }
      const startMs = pool.start_timeout * 1000
      const roots = handshake === DISCOVER ? undefined : RootsSettle.for(this.#config, handshake)
      if (roots !== undefined) {
        this.#roots = roots
        void roots.done.then(() => {
          if (this.#roots === roots) this.#roots = undefined
        })
      }
      const result = await handshakeChild(handshake, (method, params, anyAnswer) => this.#request(method, params, startMs, anyAnswer), (message) => this.#write(message))
      roots?.initialized()
      this.state = 'ready'
      this.readySince = Date.now()
      this.#log.info({ childPid: this.pid, protocolVersion: result.protocolVersion }, 'stdio upstream child ready')
      this.#liveness.start()
      return result
    } catch (error) {
      if (error instanceof NotModernError) {
        this.#die(error.message, false)
        throw error
      }
      const reason = `could not start: ${(error as Error).message}`
      this.#die(reason, true)
      throw new Error(reason)
    }
  }

  #receive(raw: unknown): void {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return this.#junk('a JSON value that is not a message', raw)
    const message = raw as Record<string, unknown>
    if (typeof message.method === 'string') {
      const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as Record<string, unknown>
      if (!('id' in message)) return this.#notification(message.method, params, message as unknown as JsonRpcNotification)
      if (typeof message.id === 'string' || typeof message.id === 'number') {
        if (message.method === 'roots/list') {
          RootsSettle.askedBy(this.#config)
          this.#roots?.asked(message.id)
        }
        return this.#router.route(message as unknown as JsonRpcRequest, params)
      }
      return this.#junk('a request with an invalid id', raw)
    }
    if ('result' in message || 'error' in message) return this.#response(message)
    this.#junk('a message that is neither request, notification nor response', raw)
  }

  #response(message: Record<string, unknown>): void {
    const childId = message.id
    const outbound = typeof childId === 'number' ? this.#outbound.get(childId) : undefined
    if (outbound === undefined) return this.#junk('an answer to an unknown id', message)
    if (outbound.internal !== undefined) return outbound.internal(message)
    this.#liveness.lastActivity = Date.now()
    this.#settle(childId as number, true)
    const session = outbound.session!
    if (outbound.subscribe !== undefined && 'result' in message) this.#subscriptions.add(outbound.subscribe, session)
    message.id = outbound.id
    session.deliver(message as unknown as JsonRpcMessage)
  }

  // What the child sends on its own (notifications, requests) is no sign that anyone still uses it:
  // a server that logs every second would otherwise never be idle.
  #notification(method: string, params: Record<string, unknown>, message: JsonRpcNotification): void {
    switch (method) {
      case 'notifications/progress': {
        const outbound = typeof params.progressToken === 'number' ? this.#outbound.get(params.progressToken) : undefined
        if (outbound?.session === undefined || outbound.token === undefined) return
        params.progressToken = outbound.token
        return outbound.session.deliver(message, outbound.id)
      }
      case 'notifications/cancelled': {
        const cancelled = this.#inbound.cancelledByChild(params.requestId as RequestId)
        if (cancelled === undefined) return
        params.requestId = cancelled.id
        return cancelled.session.deliver(message)
      }
      case 'notifications/resources/updated':
        for (const session of this.#subscriptions.of(String(params.uri))) session.deliver(message)
        return
      case 'notifications/elicitation/complete':
        return this.#inbound.elicitationCompleted(String(params.elicitationId))?.deliver(message)
      default:
        // What concerns every client of the server: its lists changed, its log.
        if (method === 'notifications/message') {
          const busy = this.#busy.size === 1 ? this.#busy.values().next().value : undefined
          for (const session of this.sessions) session.deliver(message, session === busy ? onlyRequest(session) : undefined)
        } else if (method.endsWith('/list_changed')) for (const session of this.sessions) session.deliver(message)
        else this.#log.debug({ childPid: this.pid, method }, 'stdio upstream notification with no session to go to; dropped')
    }
  }

  /** The session's calls in flight may have asked: none of their keys is learnt quiet. */
  #markAsked(session: PoolSession): void {
    for (const childId of session.inFlight.values()) {
      const outbound = this.#outbound.get(childId)
      if (outbound?.ask === undefined) continue
      outbound.asked = true
      this.#asks?.asks(outbound.ask)
    }
  }

  /** The child's request, to `session`'s client under an id of the multiplexer's own. */
  #ask(session: PoolSession, request: JsonRpcRequest, params: Record<string, unknown>): void {
    const elicitationId = request.method === 'elicitation/create' && typeof params.elicitationId === 'string' ? params.elicitationId : undefined
    const inboundId = this.#inbound.open(session, request.id, elicitationId)
    session.deliver({ ...request, id: inboundId }, onlyRequest(session))
  }

  /** The multiplexer's own request to the child. */
  #request(method: string, params: JsonObject | undefined, timeoutMs: number, anyAnswer = false): Promise<JsonObject> {
    const childId = ++this.#nextId
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#outbound.delete(childId)
        reject(new Error(`no answer to ${method} within ${timeoutMs / 1000} s`))
      }, timeoutMs)
      const internal = (message: Record<string, unknown>): void => {
        clearTimeout(timer)
        this.#outbound.delete(childId)
        const error = message.error as { message?: unknown } | undefined
        if (error !== undefined && (!anyAnswer || message.gone === true)) reject(new Error(`${method} failed: ${String(error.message)}`))
        else resolve((message.result ?? {}) as JsonObject)
      }
      this.#outbound.set(childId, { session: undefined, id: childId, token: undefined, internal })
      this.#write(params === undefined ? { jsonrpc: '2.0', id: childId, method } : { jsonrpc: '2.0', id: childId, method, params }).catch((error: unknown) => {
        clearTimeout(timer)
        this.#outbound.delete(childId)
        reject(error as Error)
      })
    })
  }

  #write(message: JsonRpcMessage): Promise<void> {
    const child = this.#process
    if (child === undefined || this.state === 'gone') return Promise.reject(new Error('the child is not running'))
    // Stdin keeps order: an answer written now is read before any request written after it.
    if (this.#roots !== undefined && !('method' in message) && message.id !== null) this.#roots.written(message.id)
    return child.write(JSON.stringify(message) + '\n', this.#config.pool.ping_timeout * 1000).catch((error: unknown) => {
      // A child that does not take its stdin in time is as hung as one that does not answer pings.
      this.#die(`its stdin failed: ${(error as Error).message}`, true)
      throw error
    })
  }

  /** Fire and forget: a failure already ends the child. */
  #send(message: JsonRpcMessage): void {
    this.#write(message).catch(() => undefined)
  }

  /** A call is over: `answered` when the child answered it (so a quiet call teaches its key). */
  #settle(childId: number, answered = false): void {
    const outbound = this.#outbound.get(childId)
    if (outbound?.session === undefined) return
    this.#outbound.delete(childId)
    const session = outbound.session
    session.inFlight.delete(outbound.id)
    if (session.inFlight.size === 0) this.#busy.delete(session)
    this.#requestsInFlight--
    if (outbound.gated === true) this.#asks!.finished(session, answered && outbound.asked !== true ? outbound.ask : undefined)
    if (this.#router.waiting !== 0) this.#router.callsEnded()
  }

  #junk(what: string, value: unknown): void {
    if (this.#process?.warnings.allow(this.#log, this.pid) === false) return
    this.#log.warn({ childPid: this.pid, head: JSON.stringify(value)?.slice(0, 200) }, `stdio upstream sent ${what}; dropped`)
  }

  #die(reason: string, unexpected: boolean): void {
    if (this.state === 'gone') return
    this.state = 'gone'
    this.#liveness.stop()
    this.#roots?.end()
    if (unexpected) this.#log.warn({ childPid: this.pid, reason }, 'stdio upstream child lost')
    else this.#log.info({ childPid: this.pid, reason }, 'stdio upstream child stopped')
    const internal = [...this.#outbound.values()].filter((outbound) => outbound.internal !== undefined)
    this.#outbound.clear()
    this.#busy.clear()
    this.#requestsInFlight = 0
    this.#router.clear()
    this.#asks?.drain(new Error(`the child ${reason}`))
    for (const outbound of internal) outbound.internal!({ error: { message: reason }, gone: true })
    for (const [session, inboundId] of this.#inbound.drain()) {
      session.deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: inboundId, reason: `the upstream ${reason}` } })
    }
    this.#subscriptions.clear()
    const sessions = [...this.sessions]
    this.sessions.clear()
    for (const session of sessions) session.childGone(this, reason)
    if (this.#process !== undefined && this.#stopped === undefined) this.#stopped = this.#process.stop(this.#graceMs)
    this.ondeath?.(this, reason, unexpected, sessions.length)
  }
}
