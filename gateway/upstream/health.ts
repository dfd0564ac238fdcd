/**
 * An upstream's health on this worker, passive and active:
 *
 *   request could not reach it, or probe failed ──► down ──► probe after 250 ms, then every 500 ms (at most health_interval)
 *   request or probe succeeded                  ──► up   ──► probe every health_interval
 *
 * A call that reached the upstream but got no answer in time is that call's failure (a slow tool),
 * not the upstream's: a hung upstream is found by its probe's own timeout, or by a list's.
 *
 * A probe is a ping on the worker's own probe session (client name `mcp-edge-health`, initialized
 * once per worker and upstream). While an upstream is down, calls to its tools answer `isError` at
 * once instead of waiting for a timeout, and lists mark it unavailable.
 *
 * Availability is an event: `onAvailability` listeners hear when the upstream becomes available
 * (down → up) or goes away (→ down); the proxy route tells its sessions that the lists changed.
 * Any kind of upstream raises it the same way: `ok()` when it serves (again), `failed()` when it is
 * lost (a stdio pool calls them when a child is ready or dies). And while the upstream has not been
 * available yet after the gateway started (`start_wait`), lists wait for it (`startingMs`, `whenAvailable`).
 */
import type { Logger } from 'pino'

export type HealthState = 'unknown' | 'up' | 'down'

/** Hears that `upstream` became available (true) or went away (false) on this worker. */
export type AvailabilityListener = (upstream: string, available: boolean) => void

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
const MAX_DOWN_BACKOFF_MS = 500

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
  readonly #listeners = new Set<AvailabilityListener>()
  /** Lists waiting for the upstream to be up (whenAvailable). */
  readonly #upWaiters = new Set<() => void>()
  /** Until when (epoch ms) lists wait for an upstream not yet available; 0 once it has been. */
  #startingUntil: number

  /**
   * `probe` undefined: passive only (a stdio pool checks its children itself). `describe` turns a
   * failed probe into a reason safe to show.
   */
  constructor(name: string, intervalMs: number, probe: (() => Promise<void>) | undefined, logger: Logger, describe: (error: unknown) => string, startWaitMs = 0) {
    this.name = name
    this.#startingUntil = startWaitMs > 0 ? Date.now() + startWaitMs : 0
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

  /** Adds a listener of availability changes; returns its removal. */
  onAvailability(listener: AvailabilityListener): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  /**
   * Milliseconds a list may still wait for this upstream: it has not been available since the
   * gateway started, and the start wait is not over. 0 otherwise.
   */
  startingMs(): number {
    if (this.#startingUntil === 0) return 0
    const left = this.#startingUntil - Date.now()
    if (left > 0) return left
    this.#startingUntil = 0
    return 0
  }

  /** Resolves true once the upstream is up (at once if it is), false after `withinMs`. */
  whenAvailable(withinMs: number): Promise<boolean> {
    if (this.#state === 'up') return Promise.resolve(true)
    if (withinMs <= 0) return Promise.resolve(false)
    return new Promise((resolve) => {
      const up = (): void => {
        clearTimeout(timer)
        resolve(true)
      }
      const timer = setTimeout(() => {
        this.#upWaiters.delete(up)
        resolve(false)
      }, withinMs)
      this.#upWaiters.add(up)
    })
  }

  /** Starts the active checks with a first probe now. */
  start(): void {
    this.#schedule(0)
  }

  /** A request or probe reached the upstream. */
  ok(): void {
    if (this.#state !== 'up') {
      const wasDown = this.#state === 'down'
      if (wasDown) {
        this.recoveries++
        this.#logger.info({ upstream: this.name }, 'upstream is back')
      }
      this.#set('up', undefined)
      this.#startingUntil = 0
      this.#backoffMs = FIRST_BACKOFF_MS
      this.#schedule(this.#intervalMs)
      // From unknown nothing was missed: a list asked it (and a failure there would have made it down).
      for (const up of this.#upWaiters) up()
      this.#upWaiters.clear()
      if (wasDown) this.#tell(true)
    }
  }

  /** A request or probe could not reach the upstream (or got no answer in time). */
  failed(reason: string): void {
    if (this.#state !== 'down') {
      this.#logger.warn({ upstream: this.name, reason }, 'upstream is unavailable')
      this.#set('down', reason)
      this.#backoffMs = FIRST_BACKOFF_MS
      this.#schedule(this.#backoffMs)
      this.#tell(false)
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
    this.#listeners.clear()
  }

  #tell(available: boolean): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(this.name, available)
      } catch (error) {
        this.#logger.error({ err: error, upstream: this.name }, 'an availability listener failed')
      }
    }
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
