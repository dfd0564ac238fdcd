/**
 * Where a stdio child's own requests to a client go (sampling, elicitation; roots of a shared child),
 * for one child of the pool (stdio-pool-child.ts). Stdio carries no link between a server's request
 * and the call it serves, so the router finds the one session whose call can have caused it:
 *
 *   named in _meta (relatedRequestId, a progress token of ours) ─► that call's session
 *   the child has one session                                   ─► that session
 *   one busy session with the capability                        ─► that session
 *   of several, the one with a call that may ask (AskGate)      ─► that session
 *   otherwise                                                   ─► waits until the calls it may belong
 *                                                                  to have ended but one (MAX_UNATTRIBUTED)
 *   roots/list of a shared child                                ─► the upstream's configured roots, never a user's
 */
import type { Logger } from 'pino'
import { RpcCode } from '../wire/errors.ts'
import type { JsonRpcMessage, JsonRpcRequest } from '../wire/jsonrpc.ts'
import { type AskGate, MAX_UNATTRIBUTED } from './stdio-pool-asks.ts'
import type { PoolSession } from './stdio-pool-session.ts'
import { missingCapability } from './stdio-pool-inbound.ts'

/** `_meta` keys that may name the request a child's request belongs to (its id as the child saw it). */
const RELATED_KEYS = ['relatedRequestId', 'io.modelcontextprotocol/related-request-id'] as const

/** A child's request to a client not yet known to be whose, and the sessions it may be. */
interface Unattributed {
  request: JsonRpcRequest
  params: Record<string, unknown>
  candidates: Set<PoolSession>
}

/** What the router needs of its child. */
export interface RouterHost {
  readonly sessions: ReadonlySet<PoolSession>
  /** Sessions with requests in flight on the child. */
  readonly busy: ReadonlySet<PoolSession>
  /** The one-session rule for calls that may ask; undefined in `session` isolation. */
  readonly asks: AskGate<PoolSession> | undefined
  /** The upstream's configured roots (what a shared child is told). */
  readonly roots: Array<{ uri: string; name?: string }> | undefined
  readonly log: Logger
  readonly pid: number | undefined
  /** The session of the call the child knows as `childId`. */
  sessionOf(childId: number): PoolSession | undefined
  /** The session's calls in flight may have asked (none of their tools is learnt quiet). */
  markAsked(session: PoolSession): void
  /** Hands the child's request to the session's client (the answer finds its way back). */
  ask(session: PoolSession, request: JsonRpcRequest, params: Record<string, unknown>): void
  send(message: JsonRpcMessage): void
}

export class ChildRequestRouter {
  readonly #host: RouterHost
  readonly #unattributed: Unattributed[] = []

  constructor(host: RouterHost) {
    this.#host = host
  }

  /** Requests of the child waiting to be told whose they are. */
  get waiting(): number {
    return this.#unattributed.length
  }

  /** A request of the child's to a client. */
  route(request: JsonRpcRequest, params: Record<string, unknown>): void {
    if (request.method === 'ping') return this.#host.send({ jsonrpc: '2.0', id: request.id, result: {} })
    if (request.method === 'roots/list' && this.#host.asks !== undefined) {
      // A shared child is never told a user's roots: only the upstream's own, when configured.
      const roots = this.#host.roots
      if (roots !== undefined) return this.#host.send({ jsonrpc: '2.0', id: request.id, result: { roots } })
      return this.#host.send({ jsonrpc: '2.0', id: request.id, error: { code: RpcCode.MethodNotFound, message: 'mcp-edge: a shared child has no roots (configure the upstream\'s roots, or isolation: session)' } })
    }
    const named = this.#namedSession(params)
    if (named !== undefined) return this.#toSession(named, request, params)
    // A child with one session (always so in `session` isolation) asks nobody else, busy or not.
    if (this.#host.busy.size === 0 && this.#host.sessions.size === 1) return this.#toSession(this.#host.sessions.values().next().value!, request, params)
    if (this.#host.busy.size === 0) return this.#refuse(request, `${request.method} arrived while no session had a request in flight`)
    const candidates = new Set<PoolSession>()
    let missing: string | number | undefined
    for (const session of this.#host.busy) {
      const lacks = missingCapability(request.method, session.capabilities)
      if (lacks === undefined) candidates.add(session)
      else missing = lacks
    }
    if (candidates.size === 0) return this.#host.send({ jsonrpc: '2.0', id: request.id, error: { code: RpcCode.MethodNotFound, message: `The client did not declare the ${missing} capability` } })
    const waiting: Unattributed = { request, params, candidates }
    if (this.#attribute(waiting)) return
    // Whose it is cannot be told yet: the calls it may belong to may ask, all of them; it waits until one is left.
    if (this.#unattributed.length >= MAX_UNATTRIBUTED) return this.#refuse(request, `${request.method} arrived while ${candidates.size} sessions had calls in flight, and ${MAX_UNATTRIBUTED} such requests already wait`)
    for (const session of candidates) this.#host.markAsked(session)
    this.#unattributed.push(waiting)
  }

  /** The session a child's request names in its `_meta` (the child's id of a call, or a progress token of ours). */
  #namedSession(params: Record<string, unknown>): PoolSession | undefined {
    const meta = params._meta as Record<string, unknown> | undefined
    if (meta === undefined || meta === null || typeof meta !== 'object') return undefined
    for (const key of RELATED_KEYS) {
      const related = meta[key]
      if (typeof related === 'number') {
        const session = this.#host.sessionOf(related)
        if (session !== undefined) return session
      }
    }
    const token = meta.progressToken
    return typeof token === 'number' ? this.#host.sessionOf(token) : undefined
  }

  /** Sends `waiting` to its session when it is known by now (true), or refuses it when none is left (true). */
  #attribute(waiting: Unattributed): boolean {
    const { candidates, request, params } = waiting
    for (const session of candidates) if (!this.#host.busy.has(session)) candidates.delete(session)
    if (candidates.size === 0) {
      this.#refuse(request, `${request.method}: every call it may belong to ended before it could be told whose it is`)
      return true
    }
    let only: PoolSession | undefined
    if (candidates.size === 1) only = candidates.values().next().value
    else if (this.#host.asks !== undefined) {
      // Of the sessions it may belong to, the one with a call that may ask.
      let count = 0
      for (const session of this.#host.asks.askingSessions()) {
        if (!candidates.has(session)) continue
        only = session
        count++
      }
      if (count !== 1) only = undefined
    }
    if (only === undefined) return false
    this.#toSession(only, request, params)
    return true
  }

  #toSession(session: PoolSession, request: JsonRpcRequest, params: Record<string, unknown>): void {
    const missing = missingCapability(request.method, session.capabilities)
    if (missing !== undefined) return this.#host.send({ jsonrpc: '2.0', id: request.id, error: { code: RpcCode.MethodNotFound, message: `The client did not declare the ${missing} capability` } })
    this.#host.markAsked(session)
    this.#host.ask(session, request, params)
  }

  /** The child is gone: nothing waits any more. */
  clear(): void {
    this.#unattributed.length = 0
  }

  #refuse(request: JsonRpcRequest, refusal: string): void {
    this.#host.log.warn({ childPid: this.#host.pid, method: request.method }, 'stdio upstream request refused: no session to ask')
    this.#host.send({ jsonrpc: '2.0', id: request.id, error: { code: RpcCode.InternalError, message: `mcp-edge: ${refusal}` } })
  }

  /** Calls ended: child requests waiting to be told whose may be told now. */
  callsEnded(): void {
    for (let i = 0; i < this.#unattributed.length; ) {
      if (this.#attribute(this.#unattributed[i]!)) this.#unattributed.splice(i, 1)
      else i++
    }
  }
}
