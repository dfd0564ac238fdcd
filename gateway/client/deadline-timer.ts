/**
 * One timer for the deadlines of many requests. A timer per request (setTimeout when it is sent,
 * clearTimeout when it is answered) cost about 10,000 instructions a call, an eighth of a client
 * request over HTTP (measured with callgrind on McpClient.request against an mcp-edge upstream);
 * almost every request is answered long before its deadline, so one timer set for the earliest
 * deadline, which looks at the pending requests only when it fires, does the same work for nothing.
 *
 *   schedule(at) ─► earlier than the timer? ─► timer moved to `at`
 *   timer fires  ─► expire(now) ─► the requests past their deadline end; the earliest one left ─► timer set for it
 *
 * The timer keeps the process alive while requests are pending (`hold`), as their own timers did,
 * and not once none is (`release`).
 */

export class DeadlineTimer {
  /** Ends what is past its deadline at `now` (performance.now()); answers the earliest deadline left (Infinity: none). */
  readonly #expire: (now: number) => number
  #timer: NodeJS.Timeout | undefined
  /** When the timer fires (performance.now()); Infinity when it is not set. */
  #at = Infinity

  constructor(expire: (now: number) => number) {
    this.#expire = expire
  }

  /** Makes sure the timer fires by `at` (performance.now(); Infinity: never) and keeps the process alive. */
  schedule(at: number): void {
    if (at < this.#at) this.#set(at)
    else if (at !== Infinity) this.#timer?.ref()
  }

  /** Nothing is pending: the timer no longer keeps the process alive (it stays set, and finds nothing). */
  release(): void {
    this.#timer?.unref()
  }

  stop(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#at = Infinity
  }

  #set(at: number): void {
    clearTimeout(this.#timer)
    this.#at = at
    // A timer may fire a little before `at` by performance.now() (the loop's clock lags): then it is set again.
    this.#timer = setTimeout(() => this.#fire(), Math.max(1, Math.ceil(at - performance.now())))
  }

  #fire(): void {
    this.#timer = undefined
    this.#at = Infinity
    const next = this.#expire(performance.now())
    if (next !== Infinity && next < this.#at) this.#set(next)
  }
}
