/**
 * What one session may make the gateway keep is bounded (issue 16, row 7): the client's capabilities
 * and clientInfo, its subscriptions (count and URI length, on sessions and on stateless listen
 * streams) and the components hidden from it. Over a bound: -32602 naming the limit's key, with the
 * request's id, and nothing stored.
 */
import t from 'tap'
import { RpcCode } from '../../gateway/wire/errors.ts'
import { assertRpcError, inject, injectGateway } from '../fixtures/transport-gateway.ts'

const limits = { client_capabilities: 1024, client_info: 512, subscriptions: 3, uri_length: 100, hidden_components: 2 }
const initialize = (id: number, capabilities: object, clientInfo: object = { name: 'c', version: '1' }) =>
  ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo } })

t.test('initialize: capabilities and clientInfo over their bounds are refused, nothing stored', async (t) => {
  const gateway = await injectGateway(t, {}, { limits })
  const big = { experimental: { blob: { data: 'x'.repeat(2000) } } }
  const refused = assertRpcError(t, await inject(gateway, initialize(1, big)), 400, RpcCode.InvalidParams, 1)
  t.match(refused.message, /limits\.client_capabilities/, 'names the key')
  const info = assertRpcError(t, await inject(gateway, initialize(2, {}, { name: 'c', version: '1', description: 'y'.repeat(600) })), 400, RpcCode.InvalidParams, 2)
  t.match(info.message, /limits\.client_info/, 'names the key')
  t.equal(await gateway.store.count('/mcp'), 0, 'no session was made')
  const fine = await inject(gateway, initialize(3, { experimental: { blob: { data: 'x'.repeat(500) } } }))
  t.equal(fine.statusCode, 200, 'under the bound is fine')
})

t.test('resources/subscribe: a bounded count of bounded URIs', async (t) => {
  const gateway = await injectGateway(t, {}, { limits })
  const sessionId = (await inject(gateway, initialize(1, {}))).headers['mcp-session-id'] as string
  const subscribe = (id: number, uri: string) => inject(gateway, { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } }, { 'mcp-session-id': sessionId })
  const long = assertRpcError(t, await subscribe(10, `test://${'u'.repeat(200)}`), 200, RpcCode.InvalidParams, 10)
  t.match(long.message, /limits\.uri_length/)
  for (let i = 0; i < 3; i++) t.equal((await subscribe(i, `test://items/r${i}`)).json().result !== undefined, true, `subscription ${i}`)
  t.same((await subscribe(20, 'test://items/r1')).json().result, {}, 'subscribing again to a held URI is fine')
  const full = assertRpcError(t, await subscribe(21, 'test://items/r3'), 200, RpcCode.InvalidParams, 21)
  t.match(full.message, /limits\.subscriptions/)
  t.same((await gateway.store.get(sessionId))?.subscriptions, ['test://items/r0', 'test://items/r1', 'test://items/r2'], 'the store holds three')
  await inject(gateway, { jsonrpc: '2.0', id: 30, method: 'resources/unsubscribe', params: { uri: 'test://items/r0' } }, { 'mcp-session-id': sessionId })
  t.same((await subscribe(31, 'test://items/r3')).json().result, {}, 'room again after an unsubscribe')
})

t.test('stateless subscriptions/listen: the same bounds', async (t) => {
  const gateway = await injectGateway(t, {}, { limits })
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
  const listen = (id: string, uris: string[]) => inject(gateway,
    { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: uris }, _meta: envelope } },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' })
  assertRpcError(t, await listen('many', ['a://1', 'a://2', 'a://3', 'a://4']), 400, RpcCode.InvalidParams, 'many')
  assertRpcError(t, await listen('long', [`a://${'x'.repeat(200)}`]), 400, RpcCode.InvalidParams, 'long')
})

t.test('ctx.session.disable: a bounded hidden set', async (t) => {
  const gateway = await injectGateway(t, {}, { limits })
  const sessionId = (await inject(gateway, initialize(1, {}))).headers['mcp-session-id'] as string
  const hidden = await inject(gateway, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'hide', arguments: { count: 5 } } }, { 'mcp-session-id': sessionId })
  t.match(hidden.json().result.content[0].text, /^hid 2: .*limits\.hidden_components/, 'the third is refused, naming the key')
  t.equal((await gateway.store.get(sessionId))?.hidden.length, 2, 'the store holds two')
})
