// The resource server against tokens minted by a test issuer (jose, RSA keys served as a JWKS on
// loopback): each bad token gets the right status and Bearer challenge; scopes gate the route and its
// components; another principal's token never reaches a session; no token reaches the logs.
import { Writable } from 'node:stream'
import path from 'node:path'
import { SignJWT } from 'jose'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { bearer, call, initialize, INIT, post, sessionRequest } from './fixtures/http.ts'
import { makeKey, startIssuer } from './fixtures/test-issuer.ts'

const ECHO = path.resolve('handlers/echo.ts')
const AUDIENCE = 'https://mcp.test/tools'
const TOOLS_LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list' }
const CALL_ECHO = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }

t.test('JWT access tokens', async (t) => {
  const keyA = await makeKey('a')
  const keyB = await makeKey('b')
  const issuer = await startIssuer(t, [keyA])
  const lines: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }))
  const route = (location: string, jwt: object) => ({
    location,
    handler: ECHO,
    server: { name: 'echo', version: '1.0.0' },
    auth: { jwt: { issuer: issuer.url, audience: AUDIENCE, ...jwt }, required_scopes: ['mcp'] },
    scopes: { tools: { 'ech*': ['echo.use'] } },
  })
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    routes: [
      // Discovers the JWKS from the issuer's metadata; refetches on an unknown kid at once.
      route('/mcp', { jwks_cooldown: 0 }),
      // A configured JWKS and the default 30 s cooldown: unknown kids cannot make it fetch again and again.
      route('/cooled', { jwks_uri: issuer.jwksUri }),
    ],
  }, '<test>')
  const gateway = await startGateway(config, { logger })
  t.teardown(() => gateway.close())
  const url = `${gateway.url}/mcp`
  const metadata = `${gateway.url}/.well-known/oauth-protected-resource/mcp`
  const claims = { sub: 'alice', scope: 'mcp echo.use' }
  const good = await issuer.mint(keyA, claims, { audience: AUDIENCE })

  t.test('protected resource metadata names the audience and the issuer', async (t) => {
    const response = await fetch(metadata)
    t.equal(response.status, 200)
    t.same(await response.json(), {
      resource: AUDIENCE,
      authorization_servers: [issuer.url],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp'],
      resource_signing_alg_values_supported: ['RS256', 'ES256'],
    })
    // Two protected routes: no bare well-known document to guess between them.
    t.equal((await fetch(`${gateway.url}/.well-known/oauth-protected-resource`)).status, 404)
  })

  t.test('no token: 401 with the metadata and the route scope', async (t) => {
    const response = await post(url, INIT)
    t.equal(response.status, 401)
    t.equal(response.headers.get('www-authenticate'), `Bearer resource_metadata="${metadata}", scope="mcp"`)
    t.match(await response.json(), { jsonrpc: '2.0', error: { code: -32000, message: /needs an access token/ } })
  })

  t.test('a valid token initializes and calls', async (t) => {
    const session = await initialize(url, bearer(good))
    const listed = await (await call(url, session, TOOLS_LIST, bearer(good))).json()
    t.same(listed.result.tools.map((tool: { name: string }) => tool.name), ['echo'])
    const called = await (await call(url, session, CALL_ECHO, bearer(good))).json()
    t.same(called.result.content, [{ type: 'text', text: 'Tool echo: hi' }])
  })

  const invalid = async (t: Test, token: string, description: RegExp, target = url): Promise<void> => {
    const response = await post(target, INIT, bearer(token))
    t.equal(response.status, 401)
    const challenge = response.headers.get('www-authenticate') ?? ''
    t.match(challenge, /^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="[^"]+", scope="mcp"$/)
    t.match(challenge, description)
    await response.text()
  }

  t.test('expired', async (t) => invalid(t, await issuer.mint(keyA, claims, { audience: AUDIENCE, expiresIn: Math.floor(Date.now() / 1000) - 120 }), /expired/))
  t.test('expired within the clock tolerance is accepted', async (t) => {
    const token = await issuer.mint(keyA, claims, { audience: AUDIENCE, expiresIn: Math.floor(Date.now() / 1000) - 5 })
    t.equal((await post(url, INIT, bearer(token))).status, 200)
  })
  t.test('not yet valid', async (t) => invalid(t, await issuer.mint(keyA, claims, { audience: AUDIENCE, notBefore: Math.floor(Date.now() / 1000) + 600 }), /not valid yet/))
  t.test('wrong issuer', async (t) => invalid(t, await issuer.mint(keyA, claims, { audience: AUDIENCE, issuer: 'https://evil.example' }), /another issuer/))
  t.test('wrong audience', async (t) => invalid(t, await issuer.mint(keyA, claims, { audience: 'https://mcp.test/other' }), /another resource/))
  t.test('no audience', async (t) => invalid(t, await issuer.mint(keyA, claims), /audience|aud/))
  t.test('no principal claim', async (t) => invalid(t, await issuer.mint(keyA, { scope: 'mcp' }, { audience: AUDIENCE }), /sub claim/))
  t.test('garbage', async (t) => invalid(t, 'not.a.jwt', /invalid/))
  t.test('not a Bearer', async (t) => {
    const response = await post(url, INIT, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` })
    t.equal(response.status, 401)
    t.match(response.headers.get('www-authenticate'), /error="invalid_token"/)
  })

  t.test('alg none is refused', async (t) => {
    const encode = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url')
    const now = Math.floor(Date.now() / 1000)
    const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ ...claims, iss: issuer.url, aud: AUDIENCE, exp: now + 300, iat: now })}.`
    await invalid(t, unsigned, /algorithm|invalid/)
  })

  t.test('HS256 signed with the RSA public key (algorithm confusion) is refused', async (t) => {
    const { exportSPKI } = await import('jose')
    const pem = await exportSPKI(keyA.publicKey)
    const forged = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', kid: 'a' })
      .setIssuer(issuer.url)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(pem))
    await invalid(t, forged, /algorithm/)
  })

  t.test('a token signed with an unknown kid, then the key rotated in', async (t) => {
    const rotated = await issuer.mint(keyB, claims, { audience: AUDIENCE })
    await invalid(t, rotated, /unknown key/)
    issuer.published = [keyA, keyB]
    const response = await post(url, INIT, bearer(rotated))
    t.equal(response.status, 200, 'the JWKS is fetched again on the unknown kid and the new key verifies')
    await response.text()
  })

  t.test('unknown kids do not make the JWKS fetched again within the cooldown', async (t) => {
    const cooled = `${gateway.url}/cooled`
    t.equal((await post(cooled, INIT, bearer(good))).status, 200)
    const before = issuer.fetches
    const keyC = await makeKey('c')
    for (let i = 0; i < 5; i++) await invalid(t, await issuer.mint(keyC, { ...claims, n: i }, { audience: AUDIENCE }), /unknown key/, cooled)
    t.ok(issuer.fetches - before <= 1, `at most one fetch for five unknown kids (${issuer.fetches - before})`)
  })

  t.test('missing scopes', async (t) => {
    const noMcp = await issuer.mint(keyA, { sub: 'carol', scope: 'echo.use' }, { audience: AUDIENCE })
    const refused = await post(url, INIT, bearer(noMcp))
    t.equal(refused.status, 403, 'a token without the route scope gets 403 at its first request')
    t.match(refused.headers.get('www-authenticate'), /^Bearer error="insufficient_scope", error_description="[^"]+", resource_metadata="[^"]+", scope="mcp"$/)
    await refused.text()

    // scp as an array counts too (Entra ID, Okta).
    const onlyMcp = await issuer.mint(keyA, { sub: 'dave', scp: ['mcp'] }, { audience: AUDIENCE })
    const session = await initialize(url, bearer(onlyMcp))
    const listed = await (await call(url, session, TOOLS_LIST, bearer(onlyMcp))).json()
    t.same(listed.result.tools, [], 'the echo tool is absent for a caller without echo.use')
    const called = await call(url, session, { ...CALL_ECHO, id: 9 }, bearer(onlyMcp))
    t.equal(called.status, 403)
    t.equal(called.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", error_description="Forbidden: tool echo needs scope echo.use", resource_metadata="${metadata}", scope="mcp echo.use"`)
    t.match(await called.json(), { id: 9, error: { code: -32000 } })

    // Stepping up: the same session with a token that has the scope now sees and calls the tool.
    const stepped = await issuer.mint(keyA, { sub: 'dave', scp: ['mcp', 'echo.use'] }, { audience: AUDIENCE })
    const relisted = await (await call(url, session, TOOLS_LIST, bearer(stepped))).json()
    t.same(relisted.result.tools.map((tool: { name: string }) => tool.name), ['echo'])
    t.equal((await call(url, session, CALL_ECHO, bearer(stepped))).status, 200)
  })

  t.test("another principal's token with a valid session id gets 404, as if the session did not exist", async (t) => {
    const session = await initialize(url, bearer(good))
    const bob = bearer(await issuer.mint(keyA, { sub: 'bob', scope: 'mcp echo.use' }, { audience: AUDIENCE }))
    const posted = await call(url, session, CALL_ECHO, bob)
    t.equal(posted.status, 404)
    t.match(await posted.json(), { id: 3, error: { code: -32001 } })
    t.equal((await sessionRequest(url, 'GET', session, bob)).status, 404)
    t.equal((await sessionRequest(url, 'DELETE', session, bob)).status, 404)
    t.equal((await call(url, session, CALL_ECHO, bearer(good))).status, 200, 'the owner still has it')
  })

  t.test('logs carry principals and never a token', async (t) => {
    const text = lines.join('')
    t.ok(text.includes('"principal":"alice"'), 'the principal is logged')
    t.notOk(text.includes(good), 'the token is not')
    t.notOk(text.includes(good.split('.')[2]!), 'nor its signature')
    t.notOk(/eyJ[A-Za-z0-9_-]{10,}/.test(text), 'nor anything JWT-shaped')
  })
})
