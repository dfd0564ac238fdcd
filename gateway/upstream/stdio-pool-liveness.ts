/**
 * Whether a stdio child is alive and whether it is idle: pinged every `ping_interval` (a child
 * that does not answer within `ping_timeout` is hung), and offered to the pool as idle once nothing
 * was under way for `idle_timeout`.
 */
import type { StdioPoolLimits } from './stdio-pool-config.ts'

/** What the liveness asks of its child. */
export interface LivenessHost {
  /** True while requests (the sessions' or the child's own) are under way. */
  busy(): boolean
  /** Any answer, an error too, proves the child alive. */
  ping(timeoutMs: number): Promise<unknown>
  /** Nothing happened for idle_timeout. */
  idle(): void
  /** The child did not answer a ping in time. */
  hung(reason: string): void
}

export class ChildLiveness {
  /** When a session last used the child (what the child sends on its own does not count). */
  lastActivity = Date.now()
  readonly #limits: StdioPoolLimits
  readonly #host: LivenessHost
  #idleTimer: NodeJS.Timeout | undefined
  #pingTimer: NodeJS.Timeout | undefined
  #pinging = false

  constructor(limits: StdioPoolLimits, host: LivenessHost) {
    this.#limits = limits
    this.#host = host
  }

  /** The child is ready: watch it. */
  start(): void {
    this.#armIdle(this.#limits.idle_timeout * 1000)
    if (this.#limits.ping_interval > 0) this.#pingTimer = setInterval(() => this.#ping(), this.#limits.ping_interval * 1000).unref()
  }

  /** The pool keeps an idle child (pool.min): wait another idle timeout. */
  keepIdle(): void {
    this.lastActivity = Date.now()
    this.#armIdle(this.#limits.idle_timeout * 1000)
  }

  stop(): void {
    clearTimeout(this.#idleTimer)
    clearInterval(this.#pingTimer)
  }

  #ping(): void {
    if (this.#pinging) return
    this.#pinging = true
    const timeout = this.#limits.ping_timeout
    this.#host.ping(timeout * 1000).then(
      () => (this.#pinging = false),
      () => this.#host.hung(`did not answer a ping within ${timeout} s`),
    )
  }

  #armIdle(ms: number): void {
    clearTimeout(this.#idleTimer)
    this.#idleTimer = setTimeout(() => {
      const quietFor = Date.now() - this.lastActivity
      const idleMs = this.#limits.idle_timeout * 1000
      if (!this.#host.busy() && quietFor >= idleMs) this.#host.idle()
      else this.#armIdle(Math.max(idleMs - quietFor, 50))
    }, ms).unref()
  }
}
