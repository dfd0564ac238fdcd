/**
 * The limiter under the cluster store: the counters live in the primary (a MemoryLimiter beside the
 * sessions it holds), and each worker asks over the IPC channel the store already uses. Messages
 * carry `mcpEdgeLimit`, so the store's side of the channel ignores them and this side ignores the store's.
 *
 *   worker ──{ mcpEdgeLimit, call, op: take | admit, args }──► primary (MemoryLimiter)
 *   worker ◄─{ mcpEdgeLimit, reply, value }──────────────────────────── primary
 */
import type { IpcPeer } from './cluster-protocol.ts'
import type { MemoryLimiter } from './limiter-memory.ts'
import type { LimitRequest, Limiter, Verdict } from './limiter.ts'
import { StoreUnavailableError } from './store.ts'

/** Milliseconds the primary has to answer before the request that waits fails with 503. */
const CALL_TIMEOUT_MS = 5000

type LimitOp = 'take' | 'admit'
interface LimitCall { mcpEdgeLimit: 1; call: number; op: LimitOp; args: unknown[] }
interface LimitReply { mcpEdgeLimit: 1; reply: number; value?: unknown }
type LimitMessage = LimitCall | LimitReply

function isLimitMessage(message: unknown): message is LimitMessage {
  return typeof message === 'object' && message !== null && (message as { mcpEdgeLimit?: unknown }).mcpEdgeLimit === 1
}

interface Waiting {
  resolve(value: unknown): void
  reject(error: Error): void
  timer: NodeJS.Timeout
}

/** A worker's limiter: every check is one IPC round trip to the primary. */
export class ClusterLimiter implements Limiter {
  readonly #primary: IpcPeer
  readonly #waiting = new Map<number, Waiting>()
  readonly #onMessage = (message: unknown): void => {
    if (isLimitMessage(message) && 'reply' in message) this.#settle(message.reply, message.value)
  }
  readonly #onDisconnect = (): void => this.#lost('the cluster primary is gone')
  #calls = 0
  #gone = false

  constructor(primary: IpcPeer) {
    this.#primary = primary
    primary.on('message', this.#onMessage)
    primary.on('disconnect', this.#onDisconnect)
  }

  async take(request: LimitRequest): Promise<Verdict> {
    return ((await this.#call('take', [request])) ?? undefined) as Verdict
  }

  async admit(key: string, sessionId: string, max: number): Promise<boolean> {
    return (await this.#call('admit', [key, sessionId, max])) === true
  }

  async close(): Promise<void> {
    this.#primary.off('message', this.#onMessage)
    this.#primary.off('disconnect', this.#onDisconnect)
    this.#lost('the limiter is closed')
  }

  #call(op: LimitOp, args: unknown[]): Promise<unknown> {
    if (this.#gone) return Promise.reject(new StoreUnavailableError('the cluster primary is gone'))
    const call = ++this.#calls
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(call)
        reject(new StoreUnavailableError(`the cluster primary did not answer ${op} within ${CALL_TIMEOUT_MS} ms`))
      }, CALL_TIMEOUT_MS)
      this.#waiting.set(call, { resolve, reject, timer })
      this.#send({ mcpEdgeLimit: 1, call, op, args })
    })
  }

  #send(message: LimitCall): void {
    try {
      this.#primary.send(message, (error) => {
        if (error !== null && message.call !== 0) this.#fail(message.call, `cannot reach the cluster primary: ${error.message}`)
      })
    } catch (error) {
      if (message.call !== 0) this.#fail(message.call, `cannot reach the cluster primary: ${(error as Error).message}`)
    }
  }

  #settle(call: number, value: unknown): void {
    const waiting = this.#waiting.get(call)
    if (waiting === undefined) return
    this.#waiting.delete(call)
    clearTimeout(waiting.timer)
    waiting.resolve(value)
  }

  #fail(call: number, reason: string): void {
    const waiting = this.#waiting.get(call)
    if (waiting === undefined) return
    this.#waiting.delete(call)
    clearTimeout(waiting.timer)
    waiting.reject(new StoreUnavailableError(reason))
  }

  #lost(reason: string): void {
    this.#gone = true
    for (const call of [...this.#waiting.keys()]) this.#fail(call, reason)
  }
}

/** The primary's side: answers every attached worker's limiter calls from one MemoryLimiter. */
export class ClusterLimiterHost {
  readonly #limiter: MemoryLimiter

  constructor(limiter: MemoryLimiter) {
    this.#limiter = limiter
  }

  /** Serves a worker's calls until it disconnects; returns a function that detaches it sooner. */
  attach(peer: IpcPeer): () => void {
    const onMessage = (message: unknown): void => {
      if (isLimitMessage(message) && 'call' in message) this.#serve(peer, message)
    }
    const detach = (): void => {
      peer.off('message', onMessage)
      peer.off('disconnect', detach)
    }
    peer.on('message', onMessage)
    peer.on('disconnect', detach)
    return detach
  }

  close(): Promise<void> {
    return this.#limiter.close()
  }

  #serve(peer: IpcPeer, { call, op, args }: LimitCall): void {
    const limiter = this.#limiter
    let value: unknown
    switch (op) {
      case 'take':
        value = limiter.take(args[0] as LimitRequest) ?? null
        break
      case 'admit':
        value = limiter.admit(args[0] as string, args[1] as string, args[2] as number)
        break
    }
    try {
      peer.send({ mcpEdgeLimit: 1, reply: call, value } satisfies LimitReply, () => undefined)
    } catch {
      // The worker is going away; it is detached on its 'disconnect'.
    }
  }
}
