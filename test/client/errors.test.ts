// Every error the client throws: its class, its stable code, and what it carries.
import t from 'tap'
import { McpError } from '../../gateway/wire/errors.ts'
import { CancelledError, ClientErrorCode, ProtocolError, RpcError, TimeoutError, TransportError } from '../../gateway/client/index.ts'

t.test('every local error has a stable MCP_EDGE_CLIENT_* code', async (t) => {
  t.same(ClientErrorCode, {
    Transport: 'MCP_EDGE_CLIENT_TRANSPORT',
    Timeout: 'MCP_EDGE_CLIENT_TIMEOUT',
    Cancelled: 'MCP_EDGE_CLIENT_CANCELLED',
    Protocol: 'MCP_EDGE_CLIENT_PROTOCOL',
  })
  const errors = [
    new TransportError('gone', { status: 404, requestId: 3 }),
    new TimeoutError('slow', 50, { requestId: 4 }),
    new CancelledError('enough', { requestId: 5 }),
    new ProtocolError('junk'),
  ]
  t.same(errors.map((error) => error.code), Object.values(ClientErrorCode))
  t.same(errors.map((error) => error.name), ['TransportError', 'TimeoutError', 'CancelledError', 'ProtocolError'])
  t.same(errors.map((error) => error.requestId), [3, 4, 5, undefined])
  for (const error of errors) t.type(error, Error)
  t.match(errors[0], { status: 404 })
  t.match(errors[1], { timeoutMs: 50 })
  t.match(errors[2], { reason: 'enough', message: 'Request cancelled: enough' })
  const cause = new Error('socket hang up')
  t.equal(new TransportError('x', { cause }).cause, cause)
})

t.test('RpcError is the wire error: a McpError with the server code and data', async (t) => {
  const error = new RpcError(-32602, 'Unknown tool: nope', { name: 'nope' })
  t.type(error, McpError)
  t.match(error, { name: 'RpcError', code: -32602, message: 'Unknown tool: nope', data: { name: 'nope' } })
  t.notOk(error instanceof TransportError)
})
