/**
 * What happens when an MCP request over HTTP ends: the one log line (route from the child logger;
 * session, method, status, duration) and the route's metrics. Costs nothing when neither is on: the
 * clock is read only when something will use it.
 */
import type { Logger } from 'pino'
import type { RouteMetrics } from '../edge/metrics.ts'

export class RequestLog {
  readonly #logger: Logger
  readonly #metrics: RouteMetrics | undefined

  constructor(logger: Logger, metrics: RouteMetrics | undefined) {
    this.#logger = logger
    this.#metrics = metrics
  }

  /** The start time to pass to `end`, or -1 when nothing will use it. */
  start(): number {
    return this.#metrics !== undefined || this.#logger.isLevelEnabled('info') ? performance.now() : -1
  }

  /** Writes the request's line and records it; `started` comes from `start`. */
  end(started: number, method: string, status: number, sessionId: string | undefined, era?: string, principal?: string): void {
    if (started < 0) return
    const elapsed = performance.now() - started
    this.#metrics?.observe(method, status, elapsed / 1000)
    if (!this.#logger.isLevelEnabled('info')) return
    const ms = Math.round(elapsed * 100) / 100
    // The principal, never the credential it was proven with.
    if (principal !== undefined) this.#logger.info(era === undefined ? { sessionId, principal, method, status, ms } : { principal, method, status, era, ms }, 'mcp request')
    else this.#logger.info(era === undefined ? { sessionId, method, status, ms } : { method, status, era, ms }, 'mcp request')
  }
}
