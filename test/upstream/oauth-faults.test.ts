// Per-user OAuth (auth.oauth) in one gateway on the memory store: the stateless (2026-07-28) consent as
// an input_required round answered by a retry; the authorization server down, slow (bounded by the
// timeout) or answering garbage, each a clean isError result naming the upstream that leaves the
// upstream up; a code exchange failing at the callback; the bound on pending consents per principal.
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { consentAsBrowser, startAuthorizationServer, startProtectedUpstream, type ProtectedUpstream } from './fixtures/oauth-parties.ts'

t.setTimeout(120_000)

const MODERN = '2026-07-28'
type Json = Record<string, unknown>

async function start(t: Test) {
  let upstream: ProtectedUpstream | undefined
  const as = await startAuthorizationServer(t, () => upstream!.url)
  upstream = await startProtectedUpstream(t, () => as.issuer)
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-oauth-faults-'))
  const keys: Record<string, string> = {}
  for (const user of ['erin', 'frank', 'gina']) keys[user] = `key-${user}-${randomBytes(12).toString('hex')}`
  const keysFile = path.join(folder, 'keys.yaml')
  writeFileSync(keysFile, JSON.stringify(Object.entries(keys).map(([principal, key]) => ({ sha256: createHash('sha256').update(key).digest('hex'), principal }))))
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    routes: [{
      location: '/p',
      server: { name: 'proxy', version: '1.0.0' },
      read_timeout: 20,
      auth: { api_keys: keysFile },
      prefix: 'never',
      upstreams: [{ name: 'docs', url: upstream.url, auth: { oauth: { redirect_uri: 'http://127.0.0.1:1/oauth/callback', timeout: 1, pending_per_principal: 2 } } }],
    }],
  }, '<test>')
  const lines: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }))
  const gateway = await startGateway(config, { logger })
  t.teardown(() => gateway.close())
  return { as, upstream, gateway, keys, lines }
}

/** One stateless tools/call of `whoami` as `key`; the answer's JSON-RPC message (JSON or the SSE's last event). */
async function call(url: string, key: string, extra: Json = {}, capabilities: Json = { elicitation: { url: {} } }): Promise<Json> {
  const params = { name: 'whoami', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': capabilities }, ...extra }
  const response = await fetch(`${url}/p`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'whoami', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomBytes(4).toString('hex'), method: 'tools/call', params }),
  })
  const body = await response.text()
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const data = body.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).filter((line) => line !== '')
    return JSON.parse(data.at(-1)!) as Json
  }
  return JSON.parse(body) as Json
}

const textOf = (message: Json): string => ((message.result as { content?: Array<{ text: string }> } | undefined)?.content?.[0]?.text ?? JSON.stringify(message))

t.test('stateless: the consent is an input_required round; the retry goes up as the caller', async (t) => {
  const { as, upstream, gateway, keys } = await start(t)
  const first = await call(gateway.url, keys.erin!)
  const result = first.result as { resultType?: string; inputRequests?: Record<string, { method: string; params: { mode: string; url: string; message: string } }>; requestState?: string }
  t.equal(result.resultType, 'input_required', 'an input_required result')
  const [key, request] = Object.entries(result.inputRequests ?? {})[0]!
  t.equal(request.method, 'elicitation/create')
  t.equal(request.params.mode, 'url', 'a URL elicitation')
  t.ok(request.params.url.startsWith(`${as.issuer}/`), 'pointing at the authorization server')
  const stop = await consentAsBrowser(request.params.url, 'erin', (url) => url.port === '1')
  const landed = await fetch(`${gateway.url}${stop.url.pathname}${stop.url.search}`)
  t.equal(landed.status, 200, 'the callback finished the exchange')
  const retry = await call(gateway.url, keys.erin!, { inputResponses: { [key]: { action: 'accept' } }, ...(result.requestState === undefined ? {} : { requestState: result.requestState }) })
  t.equal(textOf(retry), 'you are erin', 'the retried call succeeds as erin')
  t.same(upstream.calls, ['erin'])
  // A client that declares no URL elicitation gets the capability error, not a round it cannot answer.
  const bare = await call(gateway.url, keys.frank!, {}, {})
  t.equal((bare.error as { code?: number } | undefined)?.code, -32021, 'missing capability: elicitation (url)')
})

t.test('the authorization server down, slow or answering garbage: isError naming the upstream; the upstream stays up', async (t) => {
  const { as, gateway, keys, lines } = await start(t)
  for (const [mode, reason] of [['down', /unreachable/], ['slow', /no answer within 1000 ms/], ['garbage', /not a JSON object|invalid_response/]] as const) {
    as.mode = mode
    const started = Date.now()
    const answer = await call(gateway.url, keys.frank!)
    const result = answer.result as { isError?: boolean }
    t.equal(result?.isError, true, `${mode}: an isError result`)
    t.match(textOf(answer), /"docs"/, `${mode}: naming the upstream`)
    t.match(textOf(answer), reason, `${mode}: saying what went wrong`)
    t.ok(Date.now() - started < 8000, `${mode}: bounded by the timeout`)
  }
  as.mode = 'ok'
  const ready = await (await fetch(`${gateway.url}/readyz`)).json() as { upstreams: Record<string, Record<string, { state: string }>> }
  t.not(ready.upstreams['/p']!.docs!.state, 'down', 'the upstream is not marked down')

  // The consent link works; the code exchange then meets a broken server: the page says so, the state is spent.
  const asked = await call(gateway.url, keys.gina!)
  const url = Object.values((asked.result as { inputRequests: Record<string, { params: { url: string } }> }).inputRequests)[0]!.params.url
  const stop = await consentAsBrowser(url, 'gina', (next) => next.port === '1')
  as.mode = 'garbage'
  const landed = await fetch(`${gateway.url}${stop.url.pathname}${stop.url.search}`)
  as.mode = 'ok'
  t.equal(landed.status, 502, 'the code exchange failed')
  t.match(await landed.text(), /Sign-in failed/)
  t.equal((await fetch(`${gateway.url}${stop.url.pathname}${stop.url.search}`)).status, 400, 'and its state cannot be used again')
  const code = new URLSearchParams(stop.url.search).get('code')!
  t.notOk(lines.join('').includes(code), 'the code is in no log line')
})

t.test('pending consents are bounded per principal', async (t) => {
  const { gateway, keys } = await start(t)
  for (let n = 0; n < 2; n++) t.equal((await call(gateway.url, keys.frank!)).result !== undefined, true, `consent ${n + 1} is asked`)
  const third = await call(gateway.url, keys.frank!)
  t.equal((third.result as { isError?: boolean }).isError, true, 'the third pending consent is refused')
  t.match(textOf(third), /too many sign-ins pending for this caller \(at most 2\)/)
  const other = await call(gateway.url, keys.gina!)
  t.equal((other.result as { resultType?: string }).resultType, 'input_required', 'another principal is not affected')
})
