import t from 'tap'
import { RequestStateCodec, paramsDigest } from '../../gateway/protocol/stateless/request-state.ts'
import { checkParamHeaders, checkRoutingHeaders, decodeHeaderValue, headerParams } from '../../gateway/protocol/stateless/headers.ts'

const params = { name: 'deploy', arguments: { service: 'a' } }
const digest = paramsDigest(params)

t.test('a state round-trips for the request it was signed for', async (t) => {
  const codec = new RequestStateCodec('a-key-of-sixteen-chars', 60)
  const state = codec.sign('tools/call', digest, undefined, { answers: { k: { action: 'accept' } }, handlerState: { step: 2 } })
  t.same(codec.verify(state, 'tools/call', digest, undefined), { answers: { k: { action: 'accept' } }, handlerState: { step: 2 } })
})

t.test('the digest ignores the envelope, the answers and the state, but not the parameters', async (t) => {
  t.equal(paramsDigest({ ...params, _meta: { x: 1 }, inputResponses: { a: 1 }, requestState: 's' }), digest)
  t.equal(paramsDigest({ arguments: { service: 'a' }, name: 'deploy' }), digest, 'key order does not matter')
  t.not(paramsDigest({ name: 'deploy', arguments: { service: 'b' } }), digest)
})

t.test('tampered, foreign, expired or misapplied states are -32602', async (t) => {
  const codec = new RequestStateCodec('a-key-of-sixteen-chars', 60)
  const state = codec.sign('tools/call', digest, 'alice', { answers: {}, handlerState: undefined })
  t.throws(() => codec.verify(`${state}-TAMPERED`, 'tools/call', digest, 'alice'), { code: -32602 })
  t.throws(() => codec.verify(state.replace(/^./, (c) => (c === 'e' ? 'f' : 'e')), 'tools/call', digest, 'alice'), { code: -32602 }, 'payload edited')
  t.throws(() => new RequestStateCodec('another-key-of-16+', 60).verify(state, 'tools/call', digest, 'alice'), { code: -32602 }, 'other key')
  t.throws(() => codec.verify(state, 'prompts/get', digest, 'alice'), { code: -32602 }, 'wrong method')
  t.throws(() => codec.verify(state, 'tools/call', paramsDigest({ name: 'other' }), 'alice'), { code: -32602 }, 'wrong parameters')
  t.throws(() => codec.verify(state, 'tools/call', digest, 'bob'), { code: -32602 }, 'wrong principal')
  t.throws(() => codec.verify(42, 'tools/call', digest, 'alice'), { code: -32602 }, 'not a string')
  t.throws(() => codec.verify('no-dot', 'tools/call', digest, 'alice'), { code: -32602 })
  const expired = new RequestStateCodec('a-key-of-sixteen-chars', 0.001).sign('tools/call', digest, 'alice', { answers: {}, handlerState: undefined })
  await new Promise((resolve) => setTimeout(resolve, 5))
  t.throws(() => codec.verify(expired, 'tools/call', digest, 'alice'), { code: -32602, message: /expired/ })
})

t.test('routing headers: Mcp-Method and Mcp-Name must match the body', async (t) => {
  const ok = { 'mcp-method': 'tools/call', 'mcp-name': 'deploy' }
  t.doesNotThrow(() => checkRoutingHeaders(ok, 'tools/call', params))
  t.doesNotThrow(() => checkRoutingHeaders({ ...ok, 'mcp-name': '  deploy  ' }, 'tools/call', params), 'surrounding whitespace is trimmed')
  t.doesNotThrow(() => checkRoutingHeaders({ ...ok, 'mcp-name': `=?base64?${Buffer.from('deploy').toString('base64')}?=` }, 'tools/call', params))
  t.throws(() => checkRoutingHeaders({ 'mcp-name': 'deploy' }, 'tools/call', params), { code: 'MCP_EDGE_HEADER_MISMATCH', status: 400 }, 'missing Mcp-Method')
  t.throws(() => checkRoutingHeaders({ ...ok, 'mcp-method': 'TOOLS/CALL' }, 'tools/call', params), { code: 'MCP_EDGE_HEADER_MISMATCH' }, 'values are case-sensitive')
  t.throws(() => checkRoutingHeaders({ 'mcp-method': 'tools/call' }, 'tools/call', params), { code: 'MCP_EDGE_HEADER_MISMATCH' }, 'missing Mcp-Name')
  t.throws(() => checkRoutingHeaders({ ...ok, 'mcp-name': 'other' }, 'tools/call', params), { code: 'MCP_EDGE_HEADER_MISMATCH' })
  t.doesNotThrow(() => checkRoutingHeaders({ 'mcp-method': 'tools/list' }, 'tools/list', {}), 'lists carry no name')
  t.doesNotThrow(() => checkRoutingHeaders({ 'mcp-method': 'resources/read', 'mcp-name': 'a://b' }, 'resources/read', { uri: 'a://b' }))
})

t.test('header values: the base64 form is strict, anything else is literal', async (t) => {
  t.equal(decodeHeaderValue('=?base64?SGVsbG8=?=', 'x'), 'Hello')
  t.equal(decodeHeaderValue('=?base64?SGVsbG8=', 'x'), '=?base64?SGVsbG8=', 'no ?= suffix: literal')
  t.equal(decodeHeaderValue('plain', 'x'), 'plain')
  t.throws(() => decodeHeaderValue('=?base64?SGVsbG8?=', 'x'), { code: 'MCP_EDGE_HEADER_MISMATCH' }, 'bad padding')
  t.throws(() => decodeHeaderValue('=?base64?SGVs!!!bG8=?=', 'x'), { code: 'MCP_EDGE_HEADER_MISMATCH' }, 'bad characters')
})

t.test('Mcp-Param headers mirror x-mcp-header arguments', async (t) => {
  const annotated = headerParams({ type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, n: { type: 'integer', 'x-mcp-header': 'Count' }, other: { type: 'string' } } })
  t.same([...annotated], [['region', 'region'], ['count', 'n']])
  t.doesNotThrow(() => checkParamHeaders({ 'mcp-param-region': 'eu', 'mcp-param-count': '3' }, annotated, { region: 'eu', n: 3 }))
  t.doesNotThrow(() => checkParamHeaders({}, annotated, {}), 'absent arguments need no header')
  t.throws(() => checkParamHeaders({ 'mcp-param-count': '3' }, annotated, { region: 'eu', n: 3 }), { code: 'MCP_EDGE_HEADER_MISMATCH' }, 'missing header')
  t.throws(() => checkParamHeaders({ 'mcp-param-region': 'us', 'mcp-param-count': '3' }, annotated, { region: 'eu', n: 3 }), { code: 'MCP_EDGE_HEADER_MISMATCH' }, 'mismatch')
})
