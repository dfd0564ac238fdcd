/** The health probe of an HTTP or WebSocket upstream (health.ts runs it every `health_interval`). */
import { EdgeError } from '../wire/errors.ts'
import { CredentialError } from './credentials/provider.ts'
import { isRejected } from './credentials/rejection.ts'
import type { StatelessUpstream } from './stateless-upstream.ts'
import type { UpstreamLink } from './upstream-link.ts'

/**
 * Pings the upstream on the route's probe link, or asks its discover when it speaks 2026-07-28 alone
 * (no session to ping). Rejects when the upstream is down; an answer that refuses the probe is not.
 */
export async function probeUpstream(link: UpstreamLink, stateless: StatelessUpstream | undefined, timeoutMs: number): Promise<void> {
  try {
    if (stateless !== undefined && (await stateless.statelessOnly(timeoutMs))) return await stateless.probe(timeoutMs)
    await link.request('ping', undefined, { timeoutMs }, undefined)
  } catch (error) {
    // The upstream answered (401/403: the probe speaks for no one), or the gateway's credential could
    // not be had: either way not the upstream down. A credential failure is each call's own error.
    if (!(isRejected(error) || error instanceof CredentialError || error instanceof EdgeError)) throw error
  }
  link.lastUsed = Date.now()
}
