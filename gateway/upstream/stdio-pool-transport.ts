/**
 * A session's view of a stdio upstream pool: a `Transport` (gateway/client/transport.ts) that
 * behaves like a dedicated connection to the server, so `new McpClient(pool.transportFor(key))`
 * works unchanged. Underneath, the session's messages go to whichever child the pool gives it:
 *
 *   initialize        ─► pool.acquire ─► the child's handshake, answered from its cached result
 *   request           ─► child.forward (ids and progress tokens rewritten)
 *   cancelled         ─► child.notify  (rewritten to the child's id)
 *   answer            ─► child.answer  (to the child's sampling/elicitation/roots request)
 *   child gone        ─► requests in flight fail (TransportError naming the request); the next
 *                        request takes a new child, so the session goes on
 */
import { TransportError } from '../client/errors.ts'
import type { Transport } from '../client/transport.ts'
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from '../wire/jsonrpc.ts'
import type { ClientCapabilities, JsonObject } from '../wire/mcp-types.ts'
import type { PoolChild, PoolSession } from './stdio-pool-child.ts'

/** What a transport needs of its pool. */
export interface PoolHost {
  readonly name: string
  /** The session's transport was started: the pool ends it when the pool closes. */
  opened(session: StdioPoolTransport): void
  /** The child this session's messages go to, started if need be; `initialize` carries the session's own handshake (used in `session` isolation). */
  acquire(session: StdioPoolTransport, initialize?: JsonObject): Promise<PoolChild>
  /** The session is over: it leaves its child (which stops too in `session` isolation). */
  release(session: StdioPoolTransport): void
  /** Counts the children that became ready: a session placed before the last one may move to it. */
  readonly generation: number
  /** Moves an idle session to a less loaded ready child, if there is one (`shared`). */
  rebalance(session: StdioPoolTransport): void
}

/** Who a session is: the pool key. `principal` chooses the child in `principal` isolation. */
export interface StdioPoolKey {
  session: string
  principal?: string
  /**
   * The params of the session's own initialize, for a client that resumes the session without one
   * (`McpClient.resume` on another worker): in `session` isolation its child is initialized with
   * them, and server→client requests check the capabilities they declare.
   */
  initialize?: JsonObject
}

/** One session's connection to a stdio upstream through its pool. */
export class StdioPoolTransport implements Transport, PoolSession {
  onmessage?: (message: JsonRpcMessage, relatedId?: RequestId) => void
  onclose?: () => void
  onerror?: (error: Error) => void

  readonly key: StdioPoolKey
  readonly inFlight = new Map<RequestId, number>()
  capabilities: ClientCapabilities | undefined
  /** Set by the pool: the child this session's messages go to, while it lives. */
  child: PoolChild | undefined
  /** The pool's generation when the session was placed (see PoolHost.generation). */
  generation = 0
  readonly #host: PoolHost
  #state: 'new' | 'open' | 'closed' = 'new'

  constructor(host: PoolHost, key: StdioPoolKey) {
    this.#host = host
    this.key = key
    if (key.initialize !== undefined) this.capabilities = (key.initialize.capabilities ?? {}) as ClientCapabilities
  }

  get canBeAsked(): boolean {
    const capabilities = this.capabilities
    return capabilities === undefined || capabilities.sampling !== undefined || capabilities.elicitation !== undefined
  }

  /** The pid of the child serving this session now, if any (for logs and tests). */
  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): Promise<void> {
    if (this.#state !== 'new') return Promise.reject(new TransportError('The transport was already started'))
    this.#state = 'open'
    this.#host.opened(this)
    return Promise.resolve()
  }

  send(message: JsonRpcMessage): Promise<void> {
    if (this.#state !== 'open') return Promise.reject(new TransportError('The transport is not open'))
    if (!('method' in message)) return this.child?.answer(this, message) ?? Promise.resolve()
    if (!('id' in message)) {
      // The pool sent the child its own initialized; a notification for a child that is gone has nobody to reach.
      if (message.method === 'notifications/initialized' || this.child?.state !== 'ready') return Promise.resolve()
      return this.child.notify(this, message).catch((error: unknown) => {
        throw new TransportError(`${this.#host.name}: ${(error as Error).message}`, { cause: error })
      })
    }
    if (message.method === 'initialize') return this.#initialize(message)
    // A child that became ready since this session was placed may take it (one comparison per request).
    if (this.generation !== this.#host.generation) this.#host.rebalance(this)
    const child = this.child
    if (child?.state === 'ready') return child.forward(this, message).catch((error: unknown) => this.#failed(message.id, error))
    return this.#host.acquire(this).then(
      (ready) => ready.forward(this, message),
      (error: unknown) => this.#failed(message.id, error),
    ).catch((error: unknown) => this.#failed(message.id, error))
  }

  close(): Promise<void> {
    if (this.#state === 'closed') return Promise.resolve()
    this.#host.release(this)
    this.end()
    return Promise.resolve()
  }

  /** Ends the connection from the pool's side (the pool closed); onclose fires once. */
  end(): void {
    if (this.#state === 'closed') return
    this.#state = 'closed'
    this.#failInFlight('the connection closed')
    this.child = undefined
    const onclose = this.onclose
    this.onclose = undefined
    onclose?.()
  }

  deliver(message: JsonRpcMessage, relatedId?: RequestId): void {
    if (this.#state !== 'open') return
    // stdio tells no request a server's request belongs to; with one in flight on this connection, it is that one.
    const related = relatedId ?? ('method' in message && 'id' in message && this.inFlight.size === 1 ? this.inFlight.keys().next().value : undefined)
    this.onmessage?.(message, related)
  }

  childGone(child: PoolChild, reason: string): void {
    if (this.child !== child) return
    this.child = undefined
    this.#failInFlight(reason)
  }

  async #initialize(message: JsonRpcRequest): Promise<void> {
    const params = message.params ?? {}
    this.capabilities = (params.capabilities ?? {}) as ClientCapabilities
    let result: JsonObject
    try {
      const child = await this.#host.acquire(this, params)
      result = await child.ready
    } catch (error) {
      throw this.#error(message.id, error)
    }
    // After send() resolves, as a server's answer would come.
    queueMicrotask(() => this.deliver({ jsonrpc: '2.0', id: message.id, result }))
  }

  #failInFlight(reason: string): void {
    const ids = [...this.inFlight.keys()]
    this.inFlight.clear()
    for (const requestId of ids) this.onerror?.(new TransportError(`${this.#host.name}: the upstream child ${reason}`, { requestId }))
  }

  #failed(requestId: RequestId, error: unknown): never {
    throw this.#error(requestId, error)
  }

  #error(requestId: RequestId, error: unknown): TransportError {
    if (error instanceof TransportError) return error.requestId === requestId ? error : new TransportError(error.message, { requestId, cause: error })
    return new TransportError(`${this.#host.name}: ${(error as Error).message}`, { requestId, cause: error })
  }
}
