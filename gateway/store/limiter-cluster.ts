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
import { PendingCalls } from './pending-calls.ts'
import { StoreUnavailableError } from './store.ts'

type LimitOp = 'take' | 'admit' | 'reclaim'
interface LimitCall { mcpEdgeLimit: 1; call: number; op: LimitOp; args: unknown[] }
interface LimitReply { mcpEdgeLimit: 1; reply: number; value?: unknown }
type LimitMessage = LimitCall | LimitReply

function isLimitMessage(message: unknown): message is LimitMessage {
  return typeof message === 'object' && message !== null && (message as { mcpEdgeLimit?: unknown }).mcpEdgeLimit === 1
}

/** A worker's limiter: every check is one IPC round trip to the primary. */
export class ClusterLimiter implements Limiter {
  readonly #primary: IpcPeer
  readonly #pending = new PendingCalls()
  readonly #onMessage = (message: unknown): void => {
    if (isLimitMessage(message) && 'reply' in message) this.#pending.settle(message.reply, message.value)
  }
  readonly #onDisconnect = (): void => this.#pending.lost('the cluster primary is gone')

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

  async reclaim(prefix: string, key: string, capacity: number, idleTtlMs: number): Promise<string[]> {
    return (await this.#call('reclaim', [prefix, key, capacity, idleTtlMs])) as string[]
  }

  async close(): Promise<void> {
    this.#primary.off('message', this.#onMessage)
    this.#primary.off('disconnect', this.#onDisconnect)
    this.#pending.lost('the limiter is closed')
  }

  #call(op: LimitOp, args: unknown[]): Promise<unknown> {
    return this.#pending.start(op, (call) => {
      const unreachable = (error: Error): void => this.#pending.fail(call, new StoreUnavailableError(`cannot reach the cluster primary: ${error.message}`))
      try {
        this.#primary.send({ mcpEdgeLimit: 1, call, op, args } satisfies LimitCall, (error) => {
          if (error !== null) unreachable(error)
        })
      } catch (error) {
        unreachable(error as Error)
      }
    })
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
      case 'reclaim':
        value = limiter.reclaim(args[0] as string, args[1] as string, args[2] as number, args[3] as number)
        break
    }
    try {
      peer.send({ mcpEdgeLimit: 1, reply: call, value } satisfies LimitReply, () => undefined)
    } catch {
      // The worker is going away; it is detached on its 'disconnect'.
    }
  }
}
