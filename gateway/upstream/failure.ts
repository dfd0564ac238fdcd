/**
 * Upstream failures in words fit for a client and /readyz: what went wrong, never the upstream's URL
 * (it may carry a token in its query) nor internal error text.
 */
import { EdgeError } from '../wire/errors.ts'
import { CancelledError, ProtocolError, RpcError, TimeoutError, TransportError } from '../client/errors.ts'

/**
 * True when the failure says the upstream cannot be reached or does not answer (health marks it down);
 * a broken answer (ProtocolError) or a refusal fails that request only.
 */
export function isUnavailability(error: unknown): boolean {
  // A 401 or 403 is an answer: the credential of one caller was refused, the upstream is there for the others.
  if (error instanceof TransportError) return error.status !== 401 && error.status !== 403
  return error instanceof TimeoutError
}

/** A short, safe description of an upstream failure. */
export function describeFailure(error: unknown): string {
  if (error instanceof TimeoutError) return `no answer within ${error.timeoutMs} ms`
  if (error instanceof TransportError) {
    if (error.status !== undefined) return `HTTP ${error.status}`
    const cause = (error.cause as { cause?: { code?: unknown }; code?: unknown } | undefined)
    const code = cause?.cause?.code ?? cause?.code
    return typeof code === 'string' ? `connection failed (${code})` : 'connection failed or closed'
  }
  if (error instanceof ProtocolError) return 'it broke the protocol (an invalid or oversize message)'
  if (error instanceof CancelledError) return 'cancelled'
  if (error instanceof RpcError) return error.message
  // The gateway's own refusals (a credential that could not be had) say what happened, without secrets.
  if (error instanceof EdgeError) return error.message
  return 'unexpected failure'
}
