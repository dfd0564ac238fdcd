/**
 * What a request that failed unexpectedly is answered with, wherever it was served (Fastify's error
 * handler, the hot path): a refusal it carries (McpError), the store being down, or an internal error
 * whose text stays in the log under a reference the answer gives.
 */
import type { Logger } from 'pino'
import { internalErrorText, reportFailure } from '../registry/failure-report.ts'
import { StoreUnavailableError } from '../store/store.ts'
import { EdgeError, McpError, refusalOf } from '../wire/errors.ts'

/** The refusal for `error`; `fields` (request id, url) go to the log line of an unexpected one. */
export function failureRefusal(error: unknown, logger: Logger, fields: Record<string, unknown>): EdgeError {
  if (error instanceof McpError) return refusalOf(error)
  if (error instanceof StoreUnavailableError) {
    logger.debug({ err: error, ...fields }, 'session store unavailable')
    return new EdgeError('MCP_EDGE_STORE_UNAVAILABLE')
  }
  const ref = reportFailure(logger, error, fields, 'request failed')
  return new EdgeError('MCP_EDGE_INTERNAL', internalErrorText(ref))
}
