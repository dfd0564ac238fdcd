/**
 * The one log line per MCP request (route from the child logger; session, method, status, duration).
 * Costs nothing when `info` is off: the clock is read only when the line will be written.
 */
import type { Logger } from 'pino'

/** The start time to pass to `logRequest`, or -1 when the line will not be written. */
export function requestStart(logger: Logger): number {
  return logger.isLevelEnabled('info') ? performance.now() : -1
}

/** Writes the request's line; `started` comes from `requestStart`. */
export function logRequest(logger: Logger, started: number, method: string, status: number, sessionId: string | undefined, era?: string): void {
  if (started < 0) return
  const ms = Math.round((performance.now() - started) * 100) / 100
  logger.info(era === undefined ? { sessionId, method, status, ms } : { method, status, era, ms }, 'mcp request')
}
