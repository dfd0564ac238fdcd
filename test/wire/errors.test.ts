// Every error code mcp-edge produces, listed once: the wire codes and the local codes with their status.
import t from 'tap'
import { EdgeCode, EdgeError, McpError, RpcCode } from '../../gateway/wire/errors.ts'

t.test('wire codes are the JSON-RPC and MCP codes, each used for one meaning', async (t) => {
  t.same(RpcCode, {
    ParseError: -32700,
    InvalidRequest: -32600,
    MethodNotFound: -32601,
    InvalidParams: -32602,
    InternalError: -32603,
    ResourceNotFound: -32002,
    ServerError: -32000,
    SessionNotFound: -32001,
    UrlElicitationRequired: -32042,
  })
  t.equal(new Set(Object.values(RpcCode)).size, Object.keys(RpcCode).length, 'no two names share a code')
  const error = new McpError(RpcCode.ResourceNotFound, 'Resource not found', { uri: 'a://b' })
  t.same([error.code, error.message, error.data], [-32002, 'Resource not found', { uri: 'a://b' }])
})

t.test('local codes carry an HTTP status', async (t) => {
  for (const [code, status] of Object.entries(EdgeCode)) {
    t.match(code, /^MCP_EDGE_[A-Z_]+$/, code)
    t.ok(status >= 400 && status < 600, `${code} → ${status}`)
    const error = new EdgeError(code as keyof typeof EdgeCode, 'why')
    t.equal(error.status, status)
    t.equal(error.code, code)
  }
  t.equal(EdgeCode.MCP_EDGE_TOO_MANY_SESSIONS, 503)
  t.equal(EdgeCode.MCP_EDGE_SESSION_NOT_FOUND, 404)
})
