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
import { EdgeCode } from '../../../wire/errors.ts'
import { CredentialError } from '../provider.ts'
import type { OAuthStore } from './oauth-store.ts'
import type { OAuthUpstream } from './oauth-upstream.ts'


/** The page's outcome: signed in (no code), or a refusal of the error table. */
export interface CallbackAnswer {
  readonly refusal?: 'MCP_EDGE_OAUTH_STATE_INVALID' | 'MCP_EDGE_OAUTH_CONSENT_NOT_GIVEN' | 'MCP_EDGE_OAUTH_UPSTREAM_GONE' | 'MCP_EDGE_OAUTH_EXCHANGE_FAILED'
  readonly title: string
  readonly text: string
}

/** The HTTP status of `answer` (the error table's for a refusal). */
export function statusOf(answer: CallbackAnswer): number {
  return answer.refusal === undefined ? SIGNED_IN : EdgeCode[answer.refusal].status
}

const SIGNED_IN = 200

/** Finds the OAuth upstream a pending consent belongs to by its store id (undefined when it is no longer configured). */
export type FindOAuthUpstream = (upstreamId: string) => OAuthUpstream | undefined

const LIMIT = 2048

function single(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && value.length <= LIMIT ? value : undefined
}

/** Finishes the consent `query` (the callback's query parameters) names. */
export async function finishConsent(query: Record<string, unknown>, store: OAuthStore, find: FindOAuthUpstream, logger: Logger): Promise<CallbackAnswer> {
  const state = single(query.state)
  if (state === undefined) return { refusal: 'MCP_EDGE_OAUTH_STATE_INVALID', title: 'Sign-in link not valid', text: 'The request has no state. Start again from your client.' }
  const pending = await store.takePending(state)
  if (pending === undefined) {
    logger.warn('OAuth callback refused: unknown, expired or already used state')
    return { refusal: 'MCP_EDGE_OAUTH_STATE_INVALID', title: 'Sign-in link not valid', text: EdgeCode.MCP_EDGE_OAUTH_STATE_INVALID.message }
  }
  const upstream = find(pending.upstreamId)
  if (upstream === undefined) return { refusal: 'MCP_EDGE_OAUTH_UPSTREAM_GONE', title: 'Sign-in not possible', text: EdgeCode.MCP_EDGE_OAUTH_UPSTREAM_GONE.message }
  const denied = single(query.error)
  if (denied !== undefined) {
    logger.info({ upstream: pending.upstream }, 'OAuth consent was not given')
    return { refusal: 'MCP_EDGE_OAUTH_CONSENT_NOT_GIVEN', title: 'Sign-in not completed', text: `The authorization server did not grant access to "${pending.upstream}". You can close this window.` }
  }
  const code = single(query.code)
  if (code === undefined) return { refusal: 'MCP_EDGE_OAUTH_CONSENT_NOT_GIVEN', title: 'Sign-in not completed', text: 'The request has no authorization code. Start again from your client.' }
  try {
    await upstream.complete(pending, code)
  } catch (error) {
    const reason = error instanceof CredentialError ? error.message : 'unexpected failure'
    logger.warn({ upstream: pending.upstream, reason }, 'OAuth code exchange failed')
    return { refusal: 'MCP_EDGE_OAUTH_EXCHANGE_FAILED', title: 'Sign-in failed', text: `${reason}. Start again from your client.` }
  }
  logger.info({ upstream: pending.upstream }, 'OAuth consent completed')
  return { title: 'Signed in', text: `Access to "${pending.upstream}" is granted. You can close this window and return to your client.` }
}

/** The answer as a small HTML page (text escaped). */
export function callbackPage(answer: CallbackAnswer): string {
  const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(answer.title)}</title></head><body><h1>${escape(answer.title)}</h1><p>${escape(answer.text)}</p></body></html>\n`
}
