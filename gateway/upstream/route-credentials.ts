/** A proxy route's credentials: each upstream's provider, and which upstreams may need the caller's consent. */
import type { UpstreamConfig } from '../config/types.ts'
import { EdgeError } from '../wire/errors.ts'
import { upstreamTls } from './connect.ts'
import type { CredentialContext } from './credentials/context.ts'
import { createProvider } from './credentials/create-provider.ts'
import type { CredentialProvider } from './credentials/provider.ts'

export interface RouteCredentials {
  /** Each upstream's credential provider, by name. */
  providers: Map<string, CredentialProvider>
  /** The upstreams whose calls may need the caller's consent (per-user OAuth). */
  consents: Set<string>
}

/**
 * Sets up every upstream's `auth:` and reads its tls files now, so a route that cannot serve fails
 * at load. Throws MCP_EDGE_CONFIG_INVALID (a key file unreadable, …), the providers made closed.
 */
export function routeCredentials(upstreams: readonly UpstreamConfig[], context: CredentialContext): RouteCredentials {
  const providers = new Map<string, CredentialProvider>()
  const consents = new Set<string>()
  for (const upstream of upstreams) {
    try {
      providers.set(upstream.name, createProvider(upstream, context))
      if (upstream.auth?.oauth !== undefined) consents.add(upstream.name)
      try {
        upstreamTls(upstream)
      } catch {
        throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `upstream ${upstream.name}: a tls file (ca, cert, key) cannot be read`)
      }
    } catch (error) {
      for (const provider of providers.values()) provider.close()
      throw error
    }
  }
  return { providers, consents }
}
