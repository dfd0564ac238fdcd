/**
 * The gateway's requests to an authorization server, as an OAuth client: dynamic client registration
 * (RFC 7591), the authorization code exchange with its PKCE verifier and resource indicator (RFC 7636,
 * RFC 8707), refresh, and revocation (RFC 7009). Each is one bounded exchange (auth-server-http.ts).
 */
import { createHash, randomBytes } from 'node:crypto'
import { AuthServerError, exchangeJson, stringMember } from './auth-server-http.ts'
import type { AuthServerMetadata } from './discovery.ts'
import type { StoredClient, StoredTokens } from './oauth-store.ts'

/** A PKCE verifier (43 characters of base64url) and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** Registers the gateway as a client with `redirectUri` (a public client with PKCE unless the server insists on a secret). */
export async function registerClient(server: AuthServerMetadata, clientName: string, redirectUri: string, timeoutMs: number): Promise<StoredClient> {
  if (server.registrationEndpoint === undefined) {
    throw new AuthServerError('refused', 'the authorization server offers no dynamic client registration: configure client_id')
  }
  const { body } = await exchangeJson('client registration', server.registrationEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: clientName,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  }, timeoutMs)
  const clientId = stringMember(body, 'client_id')
  if (clientId === undefined) throw new AuthServerError('garbage', 'client registration: no client_id in the answer')
  const secret = stringMember(body, 'client_secret')
  const method = stringMember(body, 'token_endpoint_auth_method') ?? (secret === undefined ? 'none' : 'client_secret_basic')
  return secret === undefined ? { clientId, authMethod: method } : { clientId, clientSecret: secret, authMethod: method }
}

/** The authorization URL the user opens. */
export function authorizationUrl(server: AuthServerMetadata, client: StoredClient, options: { redirectUri: string; state: string; challenge: string; resource: string; scope: string | undefined }): string {
  const url = new URL(server.authorizationEndpoint)
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('client_id', client.clientId)
  url.searchParams.set('redirect_uri', options.redirectUri)
  url.searchParams.set('state', options.state)
  url.searchParams.set('code_challenge', options.challenge)
  url.searchParams.set('code_challenge_method', 'S256')
  url.searchParams.set('resource', options.resource)
  if (options.scope !== undefined && options.scope !== '') url.searchParams.set('scope', options.scope)
  return url.href
}

/** The code for tokens. */
export function exchangeCode(server: AuthServerMetadata, client: StoredClient, options: { code: string; verifier: string; redirectUri: string; resource: string }, timeoutMs: number): Promise<StoredTokens> {
  return tokenRequest(server, client, {
    grant_type: 'authorization_code',
    code: options.code,
    code_verifier: options.verifier,
    redirect_uri: options.redirectUri,
    resource: options.resource,
  }, timeoutMs, undefined)
}

/** New tokens for the refresh token (which the answer may rotate; kept when it does not). */
export function refreshTokens(server: AuthServerMetadata, client: StoredClient, tokens: StoredTokens, resource: string, timeoutMs: number): Promise<StoredTokens> {
  if (tokens.refreshToken === undefined) return Promise.reject(new AuthServerError('refused', 'token endpoint: no refresh token (invalid_grant)', { oauthError: 'invalid_grant' }))
  return tokenRequest(server, client, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken, resource }, timeoutMs, tokens)
}

/** Asks the server to revoke `token` (RFC 7009); resolves whatever it answers, as revocation is best effort. */
export async function revokeToken(server: AuthServerMetadata, client: StoredClient, token: string, hint: 'refresh_token' | 'access_token', timeoutMs: number): Promise<boolean> {
  if (server.revocationEndpoint === undefined) return false
  const { headers, form } = clientAuth(client, { token, token_type_hint: hint })
  try {
    const response = await fetch(server.revocationEndpoint, { method: 'POST', headers, body: form, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) })
    await response.body?.cancel()
    return response.ok
  } catch {
    return false
  }
}

async function tokenRequest(server: AuthServerMetadata, client: StoredClient, params: Record<string, string>, timeoutMs: number, previous: StoredTokens | undefined): Promise<StoredTokens> {
  const { headers, form } = clientAuth(client, params)
  const { body } = await exchangeJson('token endpoint', server.tokenEndpoint, { method: 'POST', headers, body: form }, timeoutMs)
  const accessToken = stringMember(body, 'access_token')
  const type = stringMember(body, 'token_type')
  if (accessToken === undefined || type === undefined || type.toLowerCase() !== 'bearer') throw new AuthServerError('garbage', 'token endpoint: no bearer access_token in the answer')
  const tokens: { -readonly [K in keyof StoredTokens]: StoredTokens[K] } = { accessToken }
  const refresh = stringMember(body, 'refresh_token') ?? previous?.refreshToken
  if (refresh !== undefined) tokens.refreshToken = refresh
  const expiresIn = body.expires_in
  if (typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0) tokens.expiresAt = Date.now() + expiresIn * 1000
  const scope = stringMember(body, 'scope') ?? previous?.scope
  if (scope !== undefined) tokens.scope = scope
  return tokens
}

function clientAuth(client: StoredClient, params: Record<string, string>): { headers: Record<string, string>; form: string } {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  const form = new URLSearchParams(params)
  if (client.clientSecret !== undefined && client.authMethod === 'client_secret_basic') {
    // RFC 6749 §2.3.1: both parts form-encoded before base64.
    const user = encodeURIComponent(client.clientId)
    const pass = encodeURIComponent(client.clientSecret)
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`
  } else {
    form.set('client_id', client.clientId)
    if (client.clientSecret !== undefined) form.set('client_secret', client.clientSecret)
  }
  return { headers, form: form.toString() }
}
