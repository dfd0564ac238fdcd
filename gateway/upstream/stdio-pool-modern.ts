/**
 * 2026-07-28 requests to a stdio upstream, as they came: a child of the pool that is never
 * initialized (a 2026-07-28 connection has no handshake), asked `server/discover` once when it
 * starts, takes every stateless request of the route's clients on this worker, multiplexed like a
 * shared child's (fresh ids and progress tokens). The request's `_meta` envelope (the client's own
 * capabilities and info), its `inputResponses` and the server's `requestState` reach the server
 * untouched, and its `input_required` answers (their input keys) come back as they are.
 *
 *   stateless request ─► speaks()? ─► yes ─► the discover child ─► its answer, as it is
 *                                 └─► no (discover does not list 2026-07-28) ─► the proxy translates
 *                                     onto a 2025 session (cross-era.ts), as for a 2025-only server
 *
 * Only for `isolation: shared`: one child serves every caller, which a server holding per-user
 * state (`principal`, `session`) must not do.
 */
import type { Logger } from 'pino'
import { RpcError, TimeoutError, TransportError } from '../client/errors.ts'
import type { JsonRpcMessage, RequestId } from '../wire/jsonrpc.ts'
import type { ClientCapabilities, JsonObject } from '../wire/mcp-types.ts'
import type { StdioUpstreamConfig } from './stdio-pool-config.ts'
import { PoolChild } from './stdio-pool-child.ts'
import { DISCOVER, NotModernError, type PoolSession } from './stdio-pool-session.ts'

/** Milliseconds before a child that crashed after it served is started again for 2026-07-28. */
const RETRY_MS = 10_000

export interface ModernOptions {
  timeoutMs: number
  signal?: AbortSignal
  /** Notifications the child sends about the request before its answer (progress, log). */
  onMessage?: (message: JsonRpcMessage) => void
}

/** What the channel needs of its pool: a child counts against pool.max like any other. */
export interface ModernHost {
  readonly name: string
  readonly config: StdioUpstreamConfig
  readonly log: Logger
  readonly graceMs: number
  /** Takes a slot of pool.max; false when none is free. */
  reserve(): boolean
  /** Gives the slot back (the child is gone). */
  free(): void
}

const NO_CAPABILITIES: ClientCapabilities = {}

/** One stateless request as the multiplexer sees a session: answered once, then forgotten. */
class OneRequest implements PoolSession {
  readonly capabilities = NO_CAPABILITIES
  readonly canBeAsked = false
  readonly inFlight = new Map<RequestId, number>()
  readonly done: Promise<JsonObject>
  #resolve!: (result: JsonObject) => void
  #reject!: (error: Error) => void
  readonly #onMessage: ((message: JsonRpcMessage) => void) | undefined

  constructor(onMessage: ((message: JsonRpcMessage) => void) | undefined) {
    this.#onMessage = onMessage
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
  }

  deliver(message: JsonRpcMessage, relatedId?: RequestId): void {
    if ('method' in message) {
      // Only what belongs to this request (its progress; a log line while it is the only one in
      // flight): the child's list_changed is no answer to it, and another request's log is not its
      // business. A 2026-07-28 server asks through input_required results, never with requests.
      if (relatedId !== undefined && !('id' in message)) this.#onMessage?.(message)
      return
    }
    if ('error' in message) this.#reject(new RpcError(message.error.code, message.error.message, message.error.data))
    else this.#resolve(message.result as JsonObject)
  }

  childGone(_child: PoolChild, reason: string): void {
    this.#reject(new TransportError(`the upstream child ${reason}`))
  }

  fail(error: Error): void {
    this.#reject(error)
  }
}

export class ModernChannel {
  readonly #host: ModernHost
  #child: PoolChild | undefined
  /** false: the server does not speak 2026-07-28 (its discover said so); true once a child is ready. */
  #speaks: boolean | undefined
  #retryAt = 0
  #closed = false

  constructor(host: ModernHost) {
    this.#host = host
  }

  /**
   * True when the upstream takes 2026-07-28 requests: a discover child is ready (started with the
   * gateway, or on the first call). Waits at most `timeoutMs` for its start (a request translated
   * onto a 2025 session would carry the pool's capabilities, not its client's); false for a server
   * that does not list 2026-07-28.
   */
  speaks(timeoutMs: number): boolean | Promise<boolean> {
    if (this.#speaks === false || this.#closed || this.#host.config.isolation !== 'shared') return false
    const child = this.#current()
    if (child === undefined) return false
    if (child.state === 'ready') return true
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))
    return Promise.race([child.ready.then(() => true, () => false), late]).finally(() => clearTimeout(timer))
  }

  /** Sends one request to the discover child; rejects with RpcError (the server's), TransportError or TimeoutError. */
  async request(method: string, params: JsonObject, options: ModernOptions): Promise<JsonObject> {
    const child = this.#current()
    if (child === undefined) throw new TransportError(`${this.#host.name}: no child for 2026-07-28 requests`)
    await child.ready
    const one = new OneRequest(options.onMessage)
    const id = 1
    const timer = setTimeout(() => {
      one.fail(new TimeoutError(`no answer within ${options.timeoutMs} ms`, options.timeoutMs))
      void child.notify(one, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'timed out' } }).catch(() => undefined)
    }, options.timeoutMs)
    const onAbort = (): void => {
      one.fail(new TransportError('cancelled'))
      void child.notify(one, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the client cancelled' } }).catch(() => undefined)
    }
    options.signal?.addEventListener('abort', onAbort, { once: true })
    child.attach(one)
    try {
      await child.forward(one, { jsonrpc: '2.0', id, method, params })
      return await one.done
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      child.sessions.delete(one)
    }
  }

  close(): Promise<void> {
    this.#closed = true
    return this.#child?.stop('the pool closed') ?? Promise.resolve()
  }

  /** The discover child, started if there is none and a start is allowed. */
  #current(): PoolChild | undefined {
    if (this.#child !== undefined && this.#child.state !== 'gone') return this.#child
    if (Date.now() < this.#retryAt || !this.#host.reserve()) return undefined
    const child = new PoolChild(this.#host.config, DISCOVER, this.#host.log, this.#host.graceMs)
    this.#child = child
    child.ondeath = (_gone, _reason, unexpected) => {
      this.#host.free()
      if (this.#child === child) this.#child = undefined
      // One that never answered its discover (hung, crashed, refused to start) is taken for a
      // 2025-era server: its requests are translated, rather than each waiting for another try.
      if (unexpected && child.readySince === 0) this.#speaks = false
      else if (unexpected) this.#retryAt = Date.now() + RETRY_MS
    }
    child.onidle = () => void child.stop(`idle for ${this.#host.config.pool.idle_timeout} s`)
    child.ready.then(
      () => (this.#speaks = true),
      (error: unknown) => {
        if (error instanceof NotModernError) this.#speaks = false
      },
    )
    return child
  }
}
