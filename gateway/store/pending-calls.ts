/**
 * A worker's calls to the cluster primary that wait for their reply, by number: the one bookkeeping
 * of the cluster store (cluster-client.ts) and its limiter (limiter-cluster.ts). Each call fails as
 * "store unavailable" (503 to the request that waits) when the primary does not answer in time or
 * goes away.
 */
import { StoreUnavailableError } from './store.ts'

/** Milliseconds the primary has to answer before the request that waits fails with 503. */
export const CALL_TIMEOUT_MS = 5000

interface Waiting {
  resolve(value: unknown): void
  reject(error: Error): void
  timer: NodeJS.Timeout
}

export class PendingCalls {
  readonly #waiting = new Map<number, Waiting>()
  #calls = 0
  #gone = false

  /** Numbers a call, hands the number to `send` (which posts it) and waits for `settle` or `fail` with it. */
  start(op: string, send: (call: number) => void): Promise<unknown> {
    if (this.#gone) return Promise.reject(new StoreUnavailableError('the cluster primary is gone'))
    const call = ++this.#calls
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(call)
        reject(new StoreUnavailableError(`the cluster primary did not answer ${op} within ${CALL_TIMEOUT_MS} ms`))
      }, CALL_TIMEOUT_MS)
      this.#waiting.set(call, { resolve, reject, timer })
      send(call)
    })
  }

  /** The reply to `call` came: its value. */
  settle(call: number, value: unknown): void {
    this.#take(call)?.resolve(value)
  }

  /** `call` failed with `error` (a StoreUnavailableError when the primary could not be reached). */
  fail(call: number, error: Error): void {
    this.#take(call)?.reject(error)
  }

  /** The primary is gone (or the caller closed): every waiting call and every later one fails with `reason`. */
  lost(reason: string): void {
    this.#gone = true
    for (const call of [...this.#waiting.keys()]) this.fail(call, new StoreUnavailableError(reason))
  }

  get gone(): boolean {
    return this.#gone
  }

  #take(call: number): Waiting | undefined {
    const waiting = this.#waiting.get(call)
    if (waiting === undefined) return undefined
    this.#waiting.delete(call)
    clearTimeout(waiting.timer)
    return waiting
  }
}
