/**
 * The heartbeat that says this worker still runs its tasks: written to the store while at least one
 * runs here, every third of `producer_timeout`, so a poller on another worker can tell a task whose
 * worker died (no beat for `producer_timeout`) from one still running.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { TaskRepo } from './task-repo.ts'

/** This process, as task records name the worker running them. */
export const WORKER = `${process.pid}-${randomUUID().slice(0, 8)}`

export class TaskHeartbeat {
  readonly #repo: TaskRepo
  readonly #aliveMs: number
  readonly #beatMs: number
  readonly #busy: () => boolean
  readonly #logger: Logger
  #timer: NodeJS.Timeout | undefined
  #lastBeat = 0

  /** `busy`: whether a task still runs here (the beating stops when none does). */
  constructor(repo: TaskRepo, aliveMs: number, busy: () => boolean, logger: Logger) {
    this.#repo = repo
    this.#aliveMs = aliveMs
    this.#beatMs = Math.max(50, aliveMs / 3)
    this.#busy = busy
    this.#logger = logger
  }

  /** Writes the heartbeat now unless a recent one still holds, then keeps beating while tasks run here. */
  async start(): Promise<void> {
    if (Date.now() - this.#lastBeat >= this.#beatMs / 2) {
      await this.#repo.heartbeat(WORKER, this.#aliveMs)
      this.#lastBeat = Date.now()
    }
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => {
      if (!this.#busy()) return this.stop()
      this.#repo.heartbeat(WORKER, this.#aliveMs).then(
        () => (this.#lastBeat = Date.now()),
        (error: unknown) => this.#logger.warn({ err: error }, 'cannot write the task heartbeat'),
      )
    }, this.#beatMs)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}
