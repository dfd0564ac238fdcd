/**
 * The provider of an upstream's `auth:` kind. Without `auth:`, the upstream's `headers` as they are.
 * A kind added here gets its config in config/types.ts and schema.json and its section in docs/upstream-credentials.md.
 */
import type { UpstreamConfig } from '../../config/types.ts'
import { EdgeError } from '../../wire/errors.ts'
import type { CredentialContext } from './context.ts'
import type { CredentialProvider } from './provider.ts'
import { FixedHeaders } from './provider.ts'
import { ClientCredentials } from './client-credentials.ts'
import { HeaderFiles } from './header-files.ts'
import { IdentityAssertion } from './identity-assertion.ts'
import { TokenExchange } from './token-exchange.ts'
import { OAuthCredentials } from './oauth/oauth-provider.ts'

/** A maker of one kind's provider. */
export type ProviderMaker = (upstream: UpstreamConfig, context: CredentialContext) => CredentialProvider

/** One row per `auth:` kind. */
const makers: Readonly<Record<string, ProviderMaker>> = {
  headers: (upstream, context) => HeaderFiles.create(upstream, context),
  client_credentials: (upstream, context) => new ClientCredentials(upstream, context),
  token_exchange: (upstream, context) => new TokenExchange(upstream, context),
  identity_assertion: (upstream, context) => new IdentityAssertion(upstream, context),
  oauth: (upstream, context) => OAuthCredentials.make(upstream, context),
}

/** The provider for `upstream`; throws MCP_EDGE_CONFIG_INVALID for a kind this gateway lacks or a bad setting. */
export function createProvider(upstream: UpstreamConfig, context: CredentialContext): CredentialProvider {
  const auth = upstream.auth
  if (auth === undefined) return new FixedHeaders(upstream.headers)
  if (upstream.url === undefined && upstream.openapi === undefined) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `upstream ${upstream.name}: auth is for http(s), ws(s) and openapi upstreams (a stdio child gets env)`)
  const kind = Object.keys(auth)[0]!
  // Per-user OAuth discovers an MCP server's protected-resource metadata: a REST API has none.
  if (upstream.openapi !== undefined && kind === 'oauth') throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `upstream ${upstream.name}: auth.oauth is for MCP servers; an openapi upstream takes headers, client_credentials, token_exchange or identity_assertion`)
  const maker = makers[kind]
  if (maker === undefined) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `upstream ${upstream.name}: auth.${kind} is not supported by this gateway`)
  return maker(upstream, context)
}
