/**
 * A token issuer for the JWT rows: an RS256 key served as a JWKS on loopback (in the runner's
 * process, so the server under test fetches it once and caches it), and one access token minted
 * for the bench's route, with the scopes the row checks.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'

export interface BenchIssuer {
  readonly url: string
  /** `Authorization` header value every request of the row carries. */
  readonly authorization: string
  /** The route's `auth` and `scopes` keys: a JWT check (cached JWKS), a required scope and a per-tool scope. */
  readonly route: Record<string, unknown>
  stop(): Promise<void>
}

const AUDIENCE = 'https://bench.mcp-edge.test/mcp'

export async function startIssuer(): Promise<BenchIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' }
  // GET: the JWKS. POST /token: an RFC 8693 exchange answered at once (the token-exchange row counts
  // the gateway's cached path, so the endpoint is asked once per principal and its speed does not matter).
  const server = createServer((request, response) => {
    if (request.method === 'POST') {
      request.resume()
      const token = { access_token: `exchanged-${Date.now()}`, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 7200 }
      return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(token))
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const token = await new SignJWT({ sub: 'bench', scope: 'mcp tools.echo' })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })
    .setIssuer(url)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey)
  return {
    url,
    authorization: `Bearer ${token}`,
    route: {
      auth: { jwt: { issuer: url, jwks_uri: `${url}/jwks`, audience: AUDIENCE, algorithms: ['RS256'] }, required_scopes: ['mcp'] },
      scopes: { tools: { 'echo*': ['tools.echo'] } },
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
