/**
 * What happens when an MCP request over HTTP ends: the one log line (route from the child logger;
 * session, method, status, duration) and the route's metrics. Costs nothing when neither is on: the
 * clock is read only when something will use it.
 */
import { performance } from 'node:perf_hooks'
import type { Logger } from 'pino'
import type { RouteMetrics } from '../edge/metrics.ts'
import { AccessLine } from '../log/access-line.ts'

export class RequestLog {
  readonly #logger: Logger
  readonly #metrics: RouteMetrics | undefined
  readonly #line: AccessLine

  constructor(logger: Logger, metrics: RouteMetrics | undefined) {
    this.#logger = logger
    this.#metrics = metrics
    this.#line = new AccessLine(logger)
  }

  /** The start time to pass to `end`, or -1 when nothing will use it (perf_hooks' `performance`: the global is a getter). */
  start(): number {
    return this.#metrics !== undefined || this.#logger.isLevelEnabled('info') ? performance.now() : -1
  }

  /** Writes the request's line and records it; `started` comes from `start`. */
  end(started: number, method: string, status: number, sessionId: string | undefined, era?: string, principal?: string): void {
    if (started < 0) return
    const elapsed = performance.now() - started
    this.#metrics?.observe(method, status, elapsed / 1000)
    // The principal, never the credential it was proven with; a stateless request has an era, no session.
    this.#line.write(era === undefined ? sessionId : undefined, principal, method, status, era, elapsed)
  }
}
