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
 *   child→client sampling/elicitation/roots ─► the one session with a request in flight, else an error
 *
 * The child is initialized once, by the multiplexer; every session's initialize is answered from
 * that handshake. It is pinged (a child that stops answering is replaced) and stopped when idle.
 */
import type { Logger } from 'pino'
import { RpcCode } from '../wire/errors.ts'
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from '../wire/jsonrpc.ts'
import type { ClientCapabilities, JsonObject } from '../wire/mcp-types.ts'
import type { StdioUpstreamConfig } from './stdio-pool-config.ts'
import { ChildRequests, missingCapability } from './stdio-pool-inbound.ts'
import { StdioChildProcess } from './stdio-pool-process.ts'


/** What the multiplexer needs of a session (the pool's per-session transport). */
export interface PoolSession {
  /**
   * The capabilities the session's client declared in its initialize; a server→client request needs
   * the matching one. Undefined when the session never sent initialize (a client resuming a session
   * kept as data): its client answers for itself.
   */
  readonly capabilities: ClientCapabilities | undefined
  /** Requests of this session in flight: the session's id → the child's id. */
  readonly inFlight: Map<RequestId, number>
  /**
   * A message for the session's client; `relatedId` is the session's request it belongs to, when
   * that can be told (a progress notification; a request or log line while that request is the
   * only one in flight), like the stream of a POST tells it over HTTP.
   */
  deliver(message: JsonRpcMessage, relatedId?: RequestId): void
  /** The child is gone; the session's requests in flight fail and its next request takes another child. */
  childGone(child: PoolChild, reason: string): void
}

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
}

const noop = (): void => undefined

/** A running child shared by sessions; `ready` resolves with its initialize result. */
export class PoolChild {
  readonly ready: Promise<JsonObject>
  /** Sessions whose requests go to this child. */
  readonly sessions = new Set<PoolSession>()
  state: 'starting' | 'ready' | 'gone' = 'starting'
  pid: number | undefined
  /** When the handshake completed (for the restart backoff's reset). */
  readySince = 0
  /** The child answered its idle timeout with nothing to do; the pool stops it or keeps it. */
  onidle?: (child: PoolChild) => void
  /** The child is gone; `unexpected` when it crashed, hung or failed to start (not when it was stopped). */
  ondeath?: (child: PoolChild, reason: string, unexpected: boolean) => void

  readonly #config: StdioUpstreamConfig
  readonly #log: Logger
  readonly #graceMs: number
  #process: StdioChildProcess | undefined
  #stopped: Promise<void> | undefined
  #nextId = 0
  #requestsInFlight = 0
  readonly #outbound = new Map<number, Outbound>()
  /** Sessions with at least one request in flight: the candidates for a server→client request. */
  readonly #busy = new Set<PoolSession>()
  /** The child's requests to sessions' clients, awaiting their answers. */
  readonly #inbound = new ChildRequests<PoolSession>()
  readonly #subscriptions = new Map<string, Set<PoolSession>>()
  #lastActivity = Date.now()
  #idleTimer: NodeJS.Timeout | undefined
  #pingTimer: NodeJS.Timeout | undefined
  #pinging = false

  constructor(config: StdioUpstreamConfig, handshake: JsonObject, log: Logger, graceMs: number) {
    this.#config = config
    this.#log = log
    this.#graceMs = graceMs
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

  /** The session leaves: its requests in flight are cancelled at the child, its subscriptions dropped. */
  detach(session: PoolSession): void {
    if (!this.sessions.delete(session)) return
    for (const childId of session.inFlight.values()) {
      this.#settle(childId)
      this.#send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: childId, reason: 'the session closed' } })
    }
    for (const childId of this.#inbound.dropSession(session)) {
      this.#send({ jsonrpc: '2.0', id: childId, error: { code: RpcCode.InternalError, message: 'The session closed before it answered' } })
    }
    for (const [uri, subscribers] of this.#subscriptions) {
      if (!subscribers.delete(session) || subscribers.size > 0) continue
      this.#subscriptions.delete(uri)
      this.#request('resources/unsubscribe', { uri }, this.#config.pool.ping_timeout * 1000).catch(() => undefined)
    }
  }

  /** Sends a session's request to the child under a fresh id (and a fresh progress token); rejects when the child cannot take it. */
  forward(session: PoolSession, message: JsonRpcRequest): Promise<void> {
    let params = message.params
    if (message.method === 'resources/unsubscribe' && this.#unsubscribeLocally(session, String(params?.uri))) {
      queueMicrotask(() => session.deliver({ jsonrpc: '2.0', id: message.id, result: {} }))
      return Promise.resolve()
    }
    const childId = ++this.#nextId
    const meta = params?._meta as JsonObject | undefined
    const token = meta?.progressToken
    if (token !== undefined) params = { ...params, _meta: { ...meta, progressToken: childId } }
    const outbound: Outbound = { session, id: message.id, token }
    if (message.method === 'resources/subscribe' && typeof params?.uri === 'string') outbound.subscribe = params.uri
    this.#outbound.set(childId, outbound)
    session.inFlight.set(message.id, childId)
    this.#busy.add(session)
    this.#requestsInFlight++
    this.#lastActivity = Date.now()
    const rewritten: JsonRpcRequest = params === undefined ? { jsonrpc: '2.0', id: childId, method: message.method } : { jsonrpc: '2.0', id: childId, method: message.method, params }
    return this.#write(rewritten).catch((error: unknown) => {
      this.#settle(childId)
      throw error
    })
  }

  /** A session's notification: a cancellation is rewritten to the child's id (or dropped when nothing matches). */
  notify(session: PoolSession, message: JsonRpcNotification): Promise<void> {
    this.#lastActivity = Date.now()
    if (message.method !== 'notifications/cancelled') return this.#write(message)
    const childId = session.inFlight.get(message.params?.requestId as RequestId)
    if (childId === undefined) return Promise.resolve()
    this.#settle(childId)
    return this.#write({ jsonrpc: '2.0', method: message.method, params: { ...message.params, requestId: childId } })
  }

  /** A session's answer to a request the child sent it; dropped unless it answers one sent to this session. */
  answer(session: PoolSession, message: JsonRpcMessage): Promise<void> {
    const childId = this.#inbound.answered(session, (message as { id?: unknown }).id)
    if (childId === undefined) return Promise.resolve()
    this.#lastActivity = Date.now()
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
    this.#lastActivity = Date.now()
    this.#armIdle(this.#config.pool.idle_timeout * 1000)
  }

  async #boot(handshake: JsonObject): Promise<JsonObject> {
    const { command, env, cwd, max_message_size: maxMessageSize, pool } = this.#config
    try {
      const child = await StdioChildProcess.start({ command, env, cwd, maxMessageSize, log: this.#log })
      this.#process = child
      this.pid = child.pid
      child.onmessage = (message) => this.#receive(message)
      child.onexit = (description) => this.#die(`the process ${description}`, true)
      if (this.state === 'gone') {
        this.#stopped = child.stop(this.#graceMs)
        throw new Error('stopped while starting')
      }
      const result = await this.#request('initialize', handshake, pool.start_timeout * 1000)
      if (typeof result.protocolVersion !== 'string') throw new Error('its initialize result has no protocolVersion')
      await this.#write({ jsonrpc: '2.0', method: 'notifications/initialized' })
      this.state = 'ready'
      this.readySince = Date.now()
      this.#log.info({ childPid: this.pid, protocolVersion: result.protocolVersion }, 'stdio upstream child ready')
      this.#armIdle(pool.idle_timeout * 1000)
      if (pool.ping_interval > 0) this.#pingTimer = setInterval(() => this.#ping(), pool.ping_interval * 1000).unref()
      return result
    } catch (error) {
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
      if (typeof message.id === 'string' || typeof message.id === 'number') return this.#childRequest(message as unknown as JsonRpcRequest, params)
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
    this.#lastActivity = Date.now()
    this.#settle(childId as number)
    const session = outbound.session!
    if (outbound.subscribe !== undefined && 'result' in message) {
      let subscribers = this.#subscriptions.get(outbound.subscribe)
      if (subscribers === undefined) this.#subscriptions.set(outbound.subscribe, (subscribers = new Set()))
      subscribers.add(session)
    }
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
        for (const session of this.#subscriptions.get(String(params.uri)) ?? []) session.deliver(message)
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

  #childRequest(request: JsonRpcRequest, params: Record<string, unknown>): void {
    if (request.method === 'ping') return this.#send({ jsonrpc: '2.0', id: request.id, result: {} })
    // Only a request in flight can have caused this one; with several, any choice could be the wrong client.
    const [session, other] = this.#busy
    let refusal: string | undefined
    if (session === undefined) refusal = `${request.method} arrived while no session had a request in flight`
    else if (other !== undefined) refusal = `${request.method} arrived while ${this.#busy.size} sessions had requests in flight, so it cannot be told whose it is; isolation: session gives each session its own child`
    else {
      const missing = missingCapability(request.method, session.capabilities)
      if (missing !== undefined) return this.#send({ jsonrpc: '2.0', id: request.id, error: { code: RpcCode.MethodNotFound, message: `The client did not declare the ${missing} capability` } })
    }
    if (refusal !== undefined) {
      this.#log.warn({ childPid: this.pid, method: request.method }, 'stdio upstream request refused: ambiguous on a shared child')
      return this.#send({ jsonrpc: '2.0', id: request.id, error: { code: RpcCode.InternalError, message: `mcp-edge: ${refusal}` } })
    }
    const elicitationId = request.method === 'elicitation/create' && typeof params.elicitationId === 'string' ? params.elicitationId : undefined
    const inboundId = this.#inbound.open(session!, request.id, elicitationId)
    session!.deliver({ ...request, id: inboundId }, onlyRequest(session!))
  }

  #unsubscribeLocally(session: PoolSession, uri: string): boolean {
    const subscribers = this.#subscriptions.get(uri)
    if (subscribers === undefined || !subscribers.has(session)) return false
    subscribers.delete(session)
    if (subscribers.size > 0) return true // others still want it: the child keeps the subscription
    this.#subscriptions.delete(uri)
    return false
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

  #ping(): void {
    if (this.#pinging || this.state !== 'ready') return
    this.#pinging = true
    const timeout = this.#config.pool.ping_timeout
    // Any answer proves the child alive, an error too (a server without ping still reads and writes).
    this.#request('ping', undefined, timeout * 1000, true).then(
      () => (this.#pinging = false),
      () => this.#die(`did not answer a ping within ${timeout} s`, true),
    )
  }

  #write(message: JsonRpcMessage): Promise<void> {
    const child = this.#process
    if (child === undefined || this.state === 'gone') return Promise.reject(new Error('the child is not running'))
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

  #settle(childId: number): void {
    const outbound = this.#outbound.get(childId)
    if (outbound?.session === undefined) return
    this.#outbound.delete(childId)
    const session = outbound.session
    session.inFlight.delete(outbound.id)
    if (session.inFlight.size === 0) this.#busy.delete(session)
    this.#requestsInFlight--
  }

  #armIdle(ms: number): void {
    clearTimeout(this.#idleTimer)
    this.#idleTimer = setTimeout(() => {
      const quietFor = Date.now() - this.#lastActivity
      const idleMs = this.#config.pool.idle_timeout * 1000
      if (this.#requestsInFlight === 0 && this.#inbound.size === 0 && quietFor >= idleMs) this.onidle?.(this)
      else this.#armIdle(Math.max(idleMs - quietFor, 50))
    }, ms).unref()
  }

  #junk(what: string, value: unknown): void {
    if (this.#process?.warnings.allow(this.#log, this.pid) === false) return
    this.#log.warn({ childPid: this.pid, head: JSON.stringify(value)?.slice(0, 200) }, `stdio upstream sent ${what}; dropped`)
  }

  #die(reason: string, unexpected: boolean): void {
    if (this.state === 'gone') return
    this.state = 'gone'
    clearTimeout(this.#idleTimer)
    clearInterval(this.#pingTimer)
    if (unexpected) this.#log.warn({ childPid: this.pid, reason }, 'stdio upstream child lost')
    else this.#log.info({ childPid: this.pid, reason }, 'stdio upstream child stopped')
    const internal = [...this.#outbound.values()].filter((outbound) => outbound.internal !== undefined)
    this.#outbound.clear()
    this.#busy.clear()
    this.#requestsInFlight = 0
    for (const outbound of internal) outbound.internal!({ error: { message: reason }, gone: true })
    for (const [session, inboundId] of this.#inbound.drain()) {
      session.deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: inboundId, reason: `the upstream ${reason}` } })
    }
    this.#subscriptions.clear()
    const sessions = [...this.sessions]
    this.sessions.clear()
    for (const session of sessions) session.childGone(this, reason)
    if (this.#process !== undefined && this.#stopped === undefined) this.#stopped = this.#process.stop(this.#graceMs)
    this.ondeath?.(this, reason, unexpected)
  }
}

/** The session's one request in flight, if it has exactly one: what a message of the child's then belongs to. */
function onlyRequest(session: PoolSession): RequestId | undefined {
  if (session.inFlight.size !== 1) return undefined
  return session.inFlight.keys().next().value
}
