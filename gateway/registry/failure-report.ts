/**
 * Unexpected failures of handler code. What a callback throws by accident is internal text (file
 * paths, host names, a database URL with its password in a driver's message), so it goes to the log
 * at error level with its stack under a short reference, and only the reference reaches the client:
 *
 *   thrown ─► ToolError / McpError ─► the client, as written (the handler chose those words)
 *          └► anything else ─► log {ref, err (stack)} ─► client: "Tool X failed (ref R)" or -32603 "Internal error (ref R)"
 */
import { randomBytes } from 'node:crypto'

/** Where failures are logged; a pino logger has this shape. */
export interface FailureLog {
  error(fields: object, message: string): void
}

/** Logs `error` at error level with its stack and a fresh reference; returns the reference. */
export function reportFailure(log: FailureLog, error: unknown, fields: Record<string, unknown>, message = 'handler failed'): string {
  const ref = randomBytes(6).toString('base64url')
  log.error({ ...fields, ref, err: error }, message)
  return ref
}

/** The JSON-RPC message of an unexpected failure: the reference and nothing of the failure itself. */
export function internalErrorText(ref: string): string {
  return `Internal error (ref ${ref})`
}
