// The stateless (2026-07-28) wire over raw HTTP: check order, status codes, result shapes, caching
// hints, cancellation by closing the stream, and subscriptions/listen.
import t from 'tap'
import { observed } from '../e2e/fixtures/live.ts'
import { fixture, gatewayWith } from '../e2e/harness.ts'
import { SseReader } from '../e2e/sse-reader.ts'

const VERSION = '2026-07-28'
const envelope = (extra: object = {}) => ({
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  ...extra,
})

interface Call { method: string; params?: object; headers?: Record<string, string>; id?: number | string; signal?: AbortSignal }

function call(url: string, { method, params = { _meta: envelope() }, headers = {}, id = 1, signal }: Call): Promise<Response> {
  const name = (params as { name?: string; uri?: string }).name ?? (params as { uri?: string }).uri
  return fetch(url, {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  })
}

const routes = [
  { location: '/live', handler: fixture('live'), server: { name: 'live', version: '1.0.0' } },
  { location: '/cached', handler: fixture('catalog'), server: { name: 'catalog', version: '1.0.0' }, cache: { ttl_ms: 60000, scope: 'public' } },
]

t.test('envelope checks, in the spec order, echo the request id', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const url = `${gateway.url}/live`
  const noHeader = await call(url, { method: 'tools/list', headers: { 'mcp-protocol-version': '' }, id: 'a' })
  t.equal(noHeader.status, 400)
  t.match(await noHeader.json(), { id: 'a', error: { code: -32020 } }, '_meta without the version header')
  const noMeta = await call(url, { method: 'tools/list', params: {}, id: 'b' })
  t.match([noMeta.status, await noMeta.json()], [400, { id: 'b', error: { code: -32602 } }], 'new version header, no _meta')
  const partial = await call(url, { method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION } } })
  t.match([partial.status, await partial.json()], [400, { error: { code: -32602 } }], 'no clientCapabilities')
  const mismatch = await call(url, { method: 'tools/list', params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' }) } })
  t.match([mismatch.status, await mismatch.json()], [400, { error: { code: -32020 } }], 'header differs from _meta')
  const unsupported = await call(url, { method: 'tools/list', params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' }) }, headers: { 'mcp-protocol-version': 'v999.0.0' } })
  t.match([unsupported.status, await unsupported.json()], [400, { error: { code: -32022, data: { supported: [VERSION], requested: 'v999.0.0' } } }])
  const badLevel = await call(url, { method: 'tools/list', params: { _meta: envelope({ 'io.modelcontextprotocol/logLevel': 'loud' }) } })
  t.equal(badLevel.status, 400)
  const ok = await call(url, { method: 'tools/list' })
  t.equal(ok.status, 200, 'clientInfo is optional')
  t.equal(ok.headers.get('mcp-session-id'), null, 'no session on the stateless wire')
  t.equal(await gateway.store.count('/live'), 0)
})

t.test('removed and unknown methods are 404 with -32601; GET and DELETE are 405', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const url = `${gateway.url}/live`
  for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'unknown/method']) {
    const response = await call(url, { method, params: { _meta: envelope(), uri: 'live://counter' } })
    t.match([response.status, await response.json()], [404, { error: { code: -32601 } }], method)
  }
  for (const verb of ['GET', 'DELETE']) {
    const response = await fetch(url, { method: verb, headers: { accept: 'text/event-stream' } })
    t.equal(response.status, 405, verb)
    t.equal(response.headers.get('allow'), 'POST')
  }
  const notification = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/whatever', params: { _meta: envelope() } }),
  })
  t.equal(notification.status, 202)
})

t.test('results carry resultType, server info and caching hints', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const discover = await (await call(`${gateway.url}/cached`, { method: 'server/discover' })).json()
  t.match(discover.result, {
    resultType: 'complete',
    supportedVersions: [VERSION],
    capabilities: { tools: { listChanged: true } },
    ttlMs: 60000,
    cacheScope: 'public',
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'catalog', version: '1.0.0' } },
  })
  const tools = await (await call(`${gateway.url}/cached`, { method: 'tools/list' })).json()
  t.match(tools.result, { resultType: 'complete', ttlMs: 60000, cacheScope: 'public' })
  const read = await (await call(`${gateway.url}/live`, { method: 'resources/read', params: { _meta: envelope(), uri: 'live://counter' } })).json()
  t.match(read.result, { resultType: 'complete', ttlMs: 0, cacheScope: 'private', contents: [{ uri: 'live://counter' }] }, 'defaults: 0 and private')
  const called = await (await call(`${gateway.url}/live`, { method: 'tools/call', params: { _meta: envelope(), name: 'levels' } })).json()
  t.equal(called.result.resultType, 'complete')
  t.equal(called.result.ttlMs, undefined, 'no caching hints on a tool call')
  const missing = await (await call(`${gateway.url}/live`, { method: 'resources/read', params: { _meta: envelope(), uri: 'live://nope' } })).json()
  t.match(missing.error, { code: -32602, data: { uri: 'live://nope' } }, 'resource not found is -32602 on this wire')
})

t.test('logs only with a level in the envelope; streams say X-Accel-Buffering: no', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const url = `${gateway.url}/live`
  const quiet = await call(url, { method: 'tools/call', params: { _meta: envelope(), name: 'levels' } })
  t.equal(quiet.headers.get('content-type')?.startsWith('application/json'), true, 'nothing to stream: JSON')
  const loud = await call(url, { method: 'tools/call', params: { _meta: envelope({ 'io.modelcontextprotocol/logLevel': 'warning' }), name: 'levels' } })
  t.equal(loud.headers.get('content-type'), 'text/event-stream')
  t.equal(loud.headers.get('x-accel-buffering'), 'no')
  const events = (await new SseReader(loud).rest()).map((event) => JSON.parse(event.data))
  t.same(events.filter((message) => message.method === 'notifications/message').map((message) => message.params.level), ['warning', 'error'])
  t.notOk(events.some((event) => 'id' in event && 'method' in event), 'no server-to-client request on the stream')
})

t.test('closing the response stream cancels the request', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const cut = new AbortController()
  const response = await call(`${gateway.url}/live`, { method: 'tools/call', params: { _meta: { ...envelope(), progressToken: 'p' }, name: 'slow', arguments: { steps: 50 } }, signal: cut.signal })
  const reader = new SseReader(response)
  await reader.next()
  cut.abort()
  const deadline = Date.now() + 2000
  while (!observed.aborted && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(observed.aborted, true, 'the handler saw its signal fire')
  t.equal(observed.completed, false)
})

t.test('input-required: rounds, tampering, and null inputResponses', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const url = `${gateway.url}/live`
  const caps = envelope({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } })
  const first = (await (await call(url, { method: 'tools/call', params: { _meta: caps, name: 'ask' } })).json()).result
  t.equal(first.resultType, 'input_required')
  const [key, request] = Object.entries(first.inputRequests as Record<string, { method: string }>)[0]!
  t.equal(request.method, 'elicitation/create')
  t.type(first.requestState, 'string')
  const retry = (state: string, responses: unknown) => call(url, { id: 2, method: 'tools/call', params: { _meta: caps, name: 'ask', inputResponses: responses, requestState: state } })
  const done = await (await retry(first.requestState, { [key]: { action: 'accept', content: { name: 'Lin' } } })).json()
  t.match(done.result, { resultType: 'complete', content: [{ text: 'Hello, Lin' }] })
  const tampered = await (await retry(`${first.requestState}x`, { [key]: { action: 'accept', content: { name: 'Lin' } } })).json()
  t.match(tampered.error, { code: -32602, message: /requestState/ })
  const nullResponses = await (await retry(first.requestState, null)).json()
  t.match(nullResponses.error, { code: -32602 })
  const wrongKey = await (await retry(first.requestState, { other: { action: 'accept' } })).json()
  t.equal(wrongKey.result.resultType, 'input_required', 'an unanswered request is asked again')
})

t.test('subscriptions/listen: acknowledgement first, tagged and filtered notifications', async (t) => {
  const gateway = await gatewayWith(t, routes)
  const url = `${gateway.url}/live`
  const cut = new AbortController()
  const listen = await call(url, { id: 'sub-1', method: 'subscriptions/listen', signal: cut.signal, params: { _meta: envelope(), notifications: { toolsListChanged: true, resourceSubscriptions: ['live://counter'] } } })
  const reader = new SseReader(listen)
  const ack = JSON.parse((await reader.next())!.data)
  t.match(ack, { method: 'notifications/subscriptions/acknowledged', params: { notifications: { toolsListChanged: true, resourceSubscriptions: ['live://counter'] }, _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } } })
  t.notOk('promptsListChanged' in ack.params.notifications)
  await (await call(url, { method: 'tools/call', params: { _meta: envelope(), name: 'touch' } })).json()
  await (await call(url, { method: 'tools/call', params: { _meta: envelope(), name: 'grow' } })).json()
  const first = JSON.parse((await reader.next())!.data)
  const second = JSON.parse((await reader.next())!.data)
  t.same([first.method, second.method], ['notifications/resources/updated', 'notifications/tools/list_changed'])
  t.equal(second.params._meta['io.modelcontextprotocol/subscriptionId'], 'sub-1')
  cut.abort()
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(gateway.endpoints.get('/live')!.notifier.listeners.size, 0, 'a closed stream is forgotten')
})
