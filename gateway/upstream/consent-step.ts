/**
 * The consent step of per-user OAuth, carried by the protocol itself: a call whose caller has no token
 * for the upstream asks the client to open the authorization URL, then goes on.
 *
 *   session (2025-11-25, elicitation.url declared) ─► elicitation/create {mode: url, url, elicitationId}
 *        accept ─► wait for the token (the redirect lands on any worker or host) ─► elicitation/complete ─► the call goes up
 *        decline / cancel / no token in time ─► a credential error naming the upstream
 *   stateless (2026-07-28) ─► an input_required round with the URL elicitation; the client's retry
 *        finds the token (the call goes up) or gets a new round
 *   a client that cannot take a URL elicitation ─► the error -32042 carrying it (URLElicitationRequired)
 */
import type { RequestContext } from '../registry/context.ts'
import type { SessionRecord } from '../store/store.ts'
import { ConsentRequiredError, CredentialError, type CredentialProvider } from './credentials/provider.ts'
import { OAuthCredentials } from './credentials/oauth/oauth-provider.ts'

/** Resolves once `ctx`'s caller holds a token for the upstream; throws what the client should get otherwise. */
export async function askConsent(error: ConsentRequiredError, provider: CredentialProvider, record: SessionRecord, ctx: RequestContext): Promise<void> {
  if (!(provider instanceof OAuthCredentials)) throw error
  const waitMs = provider.upstream.config.consent_wait * 1000
  if (record.id === '') {
    // Stateless: the first round records the request and throws (the dispatcher answers input_required);
    // the retry carries the answer under the same key, and the token is there or is not yet.
    const answer = await ctx.elicit(error.message, { mode: 'url', url: error.url }, { key: error.elicitationId })
    if (answer.action !== 'accept') throw declined(error.upstream)
    // A retry sent the moment the page said "signed in": the token may still be on its way to the store.
    if (!(await provider.waitForTokens(ctx.caller, Math.min(waitMs, 5000), ctx.signal))) throw error
    return
  }
  if (record.clientCapabilities.elicitation?.url === undefined) throw error
  const answer = await ctx.elicit(error.message, { mode: 'url', url: error.url, elicitationId: error.elicitationId }, { timeoutMs: waitMs })
  if (answer.action !== 'accept') throw declined(error.upstream)
  if (!(await provider.waitForTokens(ctx.caller, waitMs, ctx.signal))) {
    throw new CredentialError(error.upstream, 'consent_timeout', `the sign-in did not finish within ${provider.upstream.config.consent_wait} s; call again to get a new link`)
  }
  ctx.elicitationComplete(error.elicitationId)
}

function declined(upstream: string): CredentialError {
  return new CredentialError(upstream, 'consent_declined', 'the sign-in was declined')
}
