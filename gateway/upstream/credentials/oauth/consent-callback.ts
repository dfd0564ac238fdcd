/**
 * The redirect URI's work, framework-free (server/oauth-callback.ts serves it): the browser comes
 * back from the authorization server with `state` and `code` (or `error`), on any worker of any host.
 *
 *   state ─► pending consent taken from the store, once (forged, expired or replayed: refused)
 *         ─► its route and upstream ─► code + PKCE verifier ─► tokens for the pending consent's principal
 *
 * The page says what happened in words; it never echoes the code, the state, or the server's text.
 */
import type { Logger } from 'pino'
import { CredentialError } from '../provider.ts'
import type { OAuthStore } from './oauth-store.ts'
import type { OAuthUpstream } from './oauth-upstream.ts'


export interface CallbackAnswer {
  readonly status: number
  readonly title: string
  readonly text: string
}

/** Finds the OAuth upstream a pending consent belongs to by its store id (undefined when it is no longer configured). */
export type FindOAuthUpstream = (upstreamId: string) => OAuthUpstream | undefined

const LIMIT = 2048

function single(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && value.length <= LIMIT ? value : undefined
}

/** Finishes the consent `query` (the callback's query parameters) names. */
export async function finishConsent(query: Record<string, unknown>, store: OAuthStore, find: FindOAuthUpstream, logger: Logger): Promise<CallbackAnswer> {
  const state = single(query.state)
  if (state === undefined) return { status: 400, title: 'Sign-in link not valid', text: 'The request has no state. Start again from your client.' }
  const pending = await store.takePending(state)
  if (pending === undefined) {
    logger.warn('OAuth callback refused: unknown, expired or already used state')
    return { status: 400, title: 'Sign-in link not valid', text: 'This sign-in link is unknown, expired, or was already used. Start again from your client.' }
  }
  const upstream = find(pending.upstreamId)
  if (upstream === undefined) return { status: 404, title: 'Sign-in not possible', text: 'The server this sign-in was for is no longer configured.' }
  const denied = single(query.error)
  if (denied !== undefined) {
    logger.info({ upstream: pending.upstream }, 'OAuth consent was not given')
    return { status: 400, title: 'Sign-in not completed', text: `The authorization server did not grant access to "${pending.upstream}". You can close this window.` }
  }
  const code = single(query.code)
  if (code === undefined) return { status: 400, title: 'Sign-in not completed', text: 'The request has no authorization code. Start again from your client.' }
  try {
    await upstream.complete(pending, code)
  } catch (error) {
    const reason = error instanceof CredentialError ? error.message : 'unexpected failure'
    logger.warn({ upstream: pending.upstream, reason }, 'OAuth code exchange failed')
    return { status: 502, title: 'Sign-in failed', text: `${reason}. Start again from your client.` }
  }
  logger.info({ upstream: pending.upstream }, 'OAuth consent completed')
  return { status: 200, title: 'Signed in', text: `Access to "${pending.upstream}" is granted. You can close this window and return to your client.` }
}

/** The answer as a small HTML page (text escaped). */
export function callbackPage(answer: CallbackAnswer): string {
  const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(answer.title)}</title></head><body><h1>${escape(answer.title)}</h1><p>${escape(answer.text)}</p></body></html>\n`
}
