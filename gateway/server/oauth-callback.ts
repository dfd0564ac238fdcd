/**
 * The redirect URI of per-user OAuth (`auth.oauth.redirect_uri`), served by every worker of every
 * host: the browser lands here from the authorization server, wherever the call that asked began.
 * The query (code, state) is never logged; the answer is a small page and `Cache-Control: no-store`.
 */
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { CredentialContext } from '../upstream/credentials/context.ts'
import { callbackPage, finishConsent, statusOf } from '../upstream/credentials/oauth/consent-callback.ts'
import type { OAuthRegistry } from '../upstream/credentials/oauth/oauth-provider.ts'

/** Serves the callback path of every OAuth upstream `credentials` knows (none: nothing is added). */
export function registerOAuthCallback(app: FastifyInstance, credentials: CredentialContext, logger: Logger): void {
  const registry = credentials.extensions.get('oauth') as OAuthRegistry | undefined
  if (registry === undefined) return
  const log = logger.child({ component: 'oauth-callback' })
  for (const path of registry.callbackPaths()) {
    app.get(path, async (request, reply) => {
      const answer = await finishConsent(request.query as Record<string, unknown>, registry.store, (id) => registry.find(id), log)
      return reply
        .code(statusOf(answer))
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .send(callbackPage(answer))
    })
  }
}
