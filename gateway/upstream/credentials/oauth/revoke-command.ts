/**
 * `mcp-edge oauth-revoke --principal P --upstream NAME [--route LOCATION]`: an operator ends one
 * principal's per-user OAuth grant to one upstream. The tokens are revoked at the authorization server
 * when it offers revocation (RFC 7009) and forgotten by the store, so every host stops using them
 * (each worker's local copy lives at most LOCAL_TOKEN_MS); the principal's next call asks for consent.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { GatewayConfig, UpstreamConfig } from '../../../config/types.ts'
import { createStore } from '../../../store/create-store.ts'
import { CredentialContext } from '../context.ts'
import { OAuthCredentials } from './oauth-provider.ts'

/** How long the command waits for the store's connection. */
const CONNECT_WAIT_MS = 10_000

export interface RevokeRequest {
  readonly principal: string
  readonly upstream: string
  readonly route?: string
}

/** The OAuth upstreams named `upstream` (in `route` when given). */
function targets(config: GatewayConfig, request: RevokeRequest): UpstreamConfig[] {
  return config.routes
    .filter((route) => request.route === undefined || route.location === request.route)
    .flatMap((route) => route.upstreams)
    .filter((upstream) => upstream.name === request.upstream && upstream.auth?.oauth !== undefined)
}

/** Revokes and forgets the principal's tokens; resolves how many upstream entries held some, or undefined when no such OAuth upstream is configured. */
export async function revokeGrant(config: GatewayConfig, request: RevokeRequest, logger: Logger): Promise<number | undefined> {
  const upstreams = targets(config, request)
  if (upstreams.length === 0) return undefined
  // The cluster store lives in a running primary; its tokens die with it, so there is nothing to reach from outside.
  if (config.store.type === 'cluster') throw new Error('the cluster store is in the running gateway\'s memory: restart it, or use a Redis store')
  const store = createStore(config.store)
  const context = new CredentialContext(logger, config, store)
  try {
    // A fresh Redis connection takes a moment; commands before it is ready are refused, not queued.
    const deadline = Date.now() + CONNECT_WAIT_MS
    while (!(await store.ready())) {
      if (Date.now() > deadline) throw new Error(`the store is not reachable within ${CONNECT_WAIT_MS / 1000} s`)
      await sleep(50)
    }
    let revoked = 0
    for (const upstream of upstreams) if (await OAuthCredentials.make(upstream, context).upstream.revoke(request.principal)) revoked++
    return revoked
  } finally {
    await context.close()
    await store.close()
  }
}
