/**
 * What follows an upstream's refusal of the gateway's credential (HTTP 401, or 403 on a handshake),
 * the same for session links and stateless requests:
 *
 *   401 ─► provider.rejected(who, WWW-Authenticate) ─► 'retry'   ─► the exchange once more, fresh headers ─► 401 again: CredentialError
 *                                                   ├► 'consent' ─► provider.headers(who) throws ConsentRequiredError (the URL)
 *                                                   └► 'fail'    ─► CredentialError
 *
 * Never an unavailability: the upstream answered, so its health (shared by every caller) is not told.
 */
import { TransportError } from '../../client/errors.ts'
import type { Caller } from '../../wire/caller.ts'
import { CredentialError, type CredentialProvider } from './provider.ts'

/** True when `error` is the upstream refusing the credential it was sent (HTTP 401 or 403). */
export function isRejected(error: unknown): error is TransportError {
  return error instanceof TransportError && (error.status === 401 || error.status === 403)
}

/** The error a final refusal becomes: names the upstream and its status, never the header values sent. */
export function refusedBy(upstream: string, error: TransportError): CredentialError {
  return new CredentialError(upstream, error.status === 403 ? 'forbidden' : 'rejected', `it refused the gateway's credential (HTTP ${error.status})`)
}

/**
 * After `error` (a 401 or 403 from `upstream` to `who`'s exchange): asks the provider, then `again()`
 * once if it says retry. Rejects with ConsentRequiredError or CredentialError otherwise.
 */
export async function afterRejection<T>(provider: CredentialProvider, upstream: string, who: Caller | undefined, error: TransportError, again: () => Promise<T>): Promise<T> {
  // 403 is a refusal of what the credential allows, not of the credential: asking again changes nothing.
  if (error.status === 403) throw refusedBy(upstream, error)
  const verdict = await provider.rejected(who, error.challenge)
  if (verdict === 'consent') {
    await provider.headers(who)
    throw refusedBy(upstream, error)
  }
  if (verdict === 'fail') throw refusedBy(upstream, error)
  try {
    return await again()
  } catch (second) {
    if (!isRejected(second)) throw second
    // The fresh credential was refused too: drop it as well, so the next call starts clean.
    if (second.status === 401) await provider.rejected(who, second.challenge)
    throw refusedBy(upstream, second)
  }
}
