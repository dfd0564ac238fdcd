/** The status of an HTTP answer as the client transports read it: success, or a refusal with the server's reason. */
import { TransportError } from './errors.ts'
import type { HttpAnswer } from './http-answer.ts'
import type { RequestId } from '../wire/jsonrpc.ts'

/** A 2xx answer. */
export const ok = (response: HttpAnswer): boolean => response.status >= 200 && response.status < 300

/** A TransportError for a refused HTTP exchange, with the server's JSON-RPC error message when it sent one. */
export async function statusError(response: HttpAnswer, requestId: RequestId | undefined, refused = false): Promise<TransportError> {
  const text = await response.text(65_536).catch(() => '')
  let detail = text.slice(0, 200)
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message
    if (typeof message === 'string') detail = message
  } catch {
    // not JSON: keep the text
  }
  return new TransportError(`HTTP ${response.status}${detail === '' ? '' : `: ${detail}`}`, { status: response.status, requestId, refused, challenge: response.header('www-authenticate') })
}
