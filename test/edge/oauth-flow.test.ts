// The official SDK 1.x client's whole OAuth flow against mcp-edge and a real authorization server
// (oidc-provider on loopback): protected resource metadata and authorization server discovery, dynamic
// client registration, PKCE (S256), a login and consent completed by the test as a browser would, the
// code exchanged for a JWT access token whose audience is the route (RFC 8707), then MCP calls that
// carry the token's subject as the principal. A client without a token is sent to the metadata.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { Writable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { decodeJwt, exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { freePort } from '../fixtures/waiting.ts'
import { INIT, post } from './fixtures/http.ts'

const WHOAMI = path.resolve('test/edge/fixtures/whoami.ts')
const SUBJECT = 'alice'
const REDIRECT_URI = 'http://127.0.0.1:1/callback' // never reached: the test reads the code off the redirect

/** The authorization server: oidc-provider with registration, PKCE, resource indicators and a scripted login. */
async function startAuthorizationServer(t: Test, resource: string): Promise<string> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const provider = new Provider(issuer, {
    clients: [],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'as-1', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['oauth-flow-test'] },
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    scopes: ['openid', 'mcp'],
    ttl: { AccessToken: 300, AuthorizationCode: 60, Grant: 300, Interaction: 300, Session: 300 },
    pkce: { required: () => true, methods: ['S256'] },
    responseTypes: ['code'],
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== resource) throw new Error(`unknown resource ${indicator}`)
          return { scope: 'mcp', audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }
        },
      },
    },
  })
  const callback = provider.callback()
  // The interaction pages: logs the test user in, then consents to every scope the client asked for.
  const interact = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const details = await provider.interactionDetails(request, response)
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(request, response, { login: { accountId: SUBJECT } }, { mergeWithLastSubmission: false })
      return
    }
    const grant = (details.grantId !== undefined ? await provider.Grant.find(details.grantId) : undefined) ??
      new provider.Grant({ accountId: details.session?.accountId ?? SUBJECT, clientId: String(details.params.client_id) })
    const missing = details.prompt.details
    if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '))
    await provider.interactionFinished(request, response, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true })
  }
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.url?.startsWith('/interaction/') !== true) return callback(request, response)
    interact(request, response).catch((error: unknown) => {
      response.statusCode = 500
      response.end(String(error))
    })
  })
  return issuer
}

/** A user agent that follows the authorization redirects with its cookies and returns the code. */
async function authorize(authorizationUrl: URL): Promise<string> {
  const cookies = new Map<string, string>()
  let url = authorizationUrl
  for (let hop = 0; hop < 10; hop++) {
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ')
    const response = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } })
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? ''
      const at = pair.indexOf('=')
      cookies.set(pair.slice(0, at), pair.slice(at + 1))
    }
    const location = response.headers.get('location')
    if (location === null) throw new Error(`authorization stopped at ${url.pathname}: ${response.status} ${await response.text()}`)
    await response.arrayBuffer()
    url = new URL(location, url)
    if (url.href.startsWith(REDIRECT_URI)) {
      const code = url.searchParams.get('code')
      if (code === null) throw new Error(`no code: ${url.search}`)
      return code
    }
  }
  throw new Error('too many redirects')
}

/** The SDK's OAuthClientProvider, kept in memory; the browser step is `authorize`. */
class TestAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier: string | undefined
  authorizationUrl: URL | undefined
  code: string | undefined

  get redirectUrl(): string { return REDIRECT_URI }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'oauth-flow test', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }

  clientInformation(): OAuthClientInformationMixed | undefined { return this.client }
  saveClientInformation(client: OAuthClientInformationMixed): void { this.client = client }
  tokens(): OAuthTokens | undefined { return this.saved }
  saveTokens(tokens: OAuthTokens): void { this.saved = tokens }
  saveCodeVerifier(verifier: string): void { this.verifier = verifier }
  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no code verifier saved')
    return this.verifier
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizationUrl = url
    this.code = await authorize(url)
  }
}

t.test('the SDK client completes the OAuth flow against mcp-edge and oidc-provider', async (t) => {
  const port = await freePort()
  const route = `http://127.0.0.1:${port}/mcp`
  const metadataUrl = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`
  const issuer = await startAuthorizationServer(t, route)
  const config = configFromObject({
    listen: { host: '127.0.0.1', port },
    routes: [{
      location: '/mcp',
      handler: WHOAMI,
      server: { name: 'whoami', version: '1.0.0' },
      auth: { jwt: { issuer, audience: route }, required_scopes: ['mcp'], metadata: { authorization_servers: [issuer] } },
    }],
  }, '<test>')
  const lines: Array<Record<string, unknown>> = []
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }))
  const gateway = await startGateway(config, { logger })
  t.teardown(() => gateway.close())

  const auth = new TestAuthProvider()
  const fetched: string[] = []
  const recording = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    fetched.push(`${init?.method ?? 'GET'} ${input instanceof Request ? input.url : String(input)}`)
    return fetch(input, init)
  }

  // First connect: 401, discovery, registration, authorization (the code is captured), then UnauthorizedError.
  const first = new StreamableHTTPClientTransport(new URL(route), { authProvider: auth, fetch: recording })
  const failed = await new Client({ name: 'oauth-flow', version: '1.0.0' }).connect(first).then(() => undefined, (error: unknown) => error)
  t.ok(failed instanceof UnauthorizedError, 'the first connect throws UnauthorizedError')
  t.ok(fetched.includes(`GET ${metadataUrl}`), 'protected resource metadata fetched from the challenge')
  t.ok(fetched.some((line) => line.startsWith(`GET ${issuer}/.well-known/`)), 'authorization server metadata discovered')
  t.ok(fetched.some((line) => line.startsWith(`POST ${issuer}/reg`)), 'client registered at the registration endpoint')
  t.type(auth.client?.client_id, 'string', 'the dynamically registered client was saved')
  t.type(auth.verifier, 'string', 'a PKCE code verifier was saved')
  t.equal(auth.authorizationUrl?.searchParams.get('code_challenge_method'), 'S256')
  t.equal(auth.authorizationUrl?.searchParams.get('resource'), route, 'the authorization request names the route')
  t.type(auth.code, 'string', 'the login and consent returned a code')
  t.equal(auth.saved, undefined, 'no token before the code is exchanged')

  await first.finishAuth(auth.code ?? '')
  const token = auth.saved?.access_token ?? ''
  const claims = decodeJwt(token)
  t.equal(claims.iss, issuer)
  t.same([claims.aud].flat(), [route], 'the access token is for the route (RFC 8707)')
  t.ok(String(claims.scope).split(' ').includes('mcp'), 'the access token has the mcp scope')
  t.equal(claims.sub, SUBJECT)

  // Second connect with the saved token: the session's requests carry the token's subject.
  const client = new Client({ name: 'oauth-flow', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(route), { authProvider: auth, fetch: recording })
  await client.connect(transport)
  t.teardown(() => client.close())
  t.type(transport.sessionId, 'string', 'a session was created')
  const listed = await client.listTools()
  t.same(listed.tools.map((tool) => tool.name), ['whoami'])
  const called = await client.callTool({ name: 'whoami', arguments: {} })
  t.same(called.content, [{ type: 'text', text: SUBJECT }], 'the principal is the token subject')
  const logged = lines.filter((line) => line.msg === 'mcp request' && line.sessionId === transport.sessionId)
  t.same(logged.map((line) => line.method), ['initialize', 'notifications/initialized', 'tools/list', 'tools/call'])
  t.ok(logged.every((line) => line.principal === SUBJECT), 'every log line of the session names the principal')
  t.notOk(lines.some((line) => JSON.stringify(line).includes(token)), 'the token never reaches the logs')

  // A client without a token: 401 with the challenge that names the metadata, which names the issuer.
  const refused = await post(route, INIT)
  t.equal(refused.status, 401)
  t.equal(refused.headers.get('www-authenticate'), `Bearer resource_metadata="${metadataUrl}", scope="mcp"`)
  await refused.text()
  const metadata = await (await fetch(metadataUrl)).json()
  t.match(metadata, { resource: route, authorization_servers: [issuer], scopes_supported: ['mcp'] })
})
