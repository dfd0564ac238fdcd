/**
 * An upstream's health on this worker, passive and active:
 *
 *   request failed (transport, timeout) ──► down ──► probe after 250 ms, 500 ms, then every 1 s (at most health_interval)
 *   request or probe succeeded         ──► up   ──► probe every health_interval
 *
 * A probe is a ping on the worker's own probe session (client name `mcp-edge-health`, initialized
 * once per worker and upstream). While an upstream is down, calls to its tools answer `isError` at
 * once instead of waiting for a timeout, and lists mark it unavailable.
 */
import type { Logger } from 'pino'

export type HealthState = 'unknown' | 'up' | 'down'

/** What /readyz shows of one upstream. */
export interface HealthReport {
  state: HealthState
  /** Why it is down (the last failure, without internals). */
  reason?: string
  /** Since when it has been in this state (ISO time). */
  since: string
}

const FIRST_BACKOFF_MS = 250
/**
 * The longest wait between probes while down: a restarted upstream serves again within about a
 * second (one ping a second per worker is cheap, and callers are answered at once meanwhile).
 */
const MAX_DOWN_BACKOFF_MS = 1000

export class UpstreamHealth {
  readonly name: string
  #state: HealthState = 'unknown'
  #since = Date.now()
  #reason: string | undefined
  #backoffMs = FIRST_BACKOFF_MS
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  /** Times it came back after being down (a reconnection), for the metrics. */
  recoveries = 0
  readonly #intervalMs: number
  readonly #probe: (() => Promise<void>) | undefined
  readonly #logger: Logger
  readonly #describe: (error: unknown) => string

  /**
   * `probe` undefined: passive only (a stdio pool checks its children itself). `describe` turns a
   * failed probe into a reason safe to show.
   */
  constructor(name: string, intervalMs: number, probe: (() => Promise<void>) | undefined, logger: Logger, describe: (error: unknown) => string) {
    this.name = name
    this.#intervalMs = intervalMs
    this.#probe = probe
    this.#logger = logger
    this.#describe = describe
  }

  get state(): HealthState {
    return this.#state
  }

  get reason(): string | undefined {
    return this.#reason
  }

  /** Starts the active checks with a first probe now. */
  start(): void {
    this.#schedule(0)
  }

  /** A request or probe reached the upstream. */
  ok(): void {
    if (this.#state !== 'up') {
      if (this.#state === 'down') {
        this.recoveries++
        this.#logger.info({ upstream: this.name }, 'upstream is back')
      }
      this.#set('up', undefined)
      this.#backoffMs = FIRST_BACKOFF_MS
      this.#schedule(this.#intervalMs)
    }
  }

  /** A request or probe could not reach the upstream (or got no answer in time). */
  failed(reason: string): void {
    if (this.#state !== 'down') {
      this.#logger.warn({ upstream: this.name, reason }, 'upstream is unavailable')
      this.#set('down', reason)
      this.#backoffMs = FIRST_BACKOFF_MS
      this.#schedule(this.#backoffMs)
    } else {
      this.#reason = reason
    }
  }

  report(): HealthReport {
    const report: HealthReport = { state: this.#state, since: new Date(this.#since).toISOString() }
    if (this.#reason !== undefined) report.reason = this.#reason
    return report
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  #set(state: HealthState, reason: string | undefined): void {
    this.#state = state
    this.#reason = reason
    this.#since = Date.now()
  }

  #schedule(delayMs: number): void {
    if (this.#probe === undefined || this.#stopped) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => void this.#run(), delayMs)
    this.#timer.unref()
  }

  async #run(): Promise<void> {
    try {
      await this.#probe!()
      if (this.#state === 'up') this.#schedule(this.#intervalMs)
      else this.ok()
    } catch (error) {
      const wasDown = this.#state === 'down'
      this.failed(this.#describe(error))
      if (wasDown) {
        this.#backoffMs = Math.min(this.#backoffMs * 2, MAX_DOWN_BACKOFF_MS, this.#intervalMs)
        this.#schedule(this.#backoffMs)
      }
    }
  }
}
