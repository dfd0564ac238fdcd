// Every error code mcp-edge produces, listed once: the wire codes, and the error table every refusal
// goes through (code, HTTP status, JSON-RPC code, message). Like Fastify's errors test, it also reads
// gateway/ and fails on a status or a JSON-RPC code chosen outside the table.
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { EdgeCode, EdgeError, McpError, RpcCode, refusalOf, type EdgeCodeName } from '../../gateway/wire/errors.ts'

const GATEWAY = resolve(dirname(fileURLToPath(import.meta.url)), '../../gateway')

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
    HeaderMismatch: -32020,
    MissingCapability: -32021,
    UnsupportedVersion: -32022,
    UrlElicitationRequired: -32042,
  })
  t.equal(new Set(Object.values(RpcCode)).size, Object.keys(RpcCode).length, 'no two names share a code')
  const error = new McpError(RpcCode.ResourceNotFound, 'Resource not found', { uri: 'a://b' })
  t.same([error.code, error.message, error.data], [-32002, 'Resource not found', { uri: 'a://b' }])
})

t.test('every row has a name, an error status, a wire code and a message', async (t) => {
  const wire: ReadonlySet<number> = new Set(Object.values(RpcCode))
  for (const [code, row] of Object.entries(EdgeCode)) {
    t.match(code, /^MCP_EDGE_[A-Z_]+$/, code)
    t.ok(row.status >= 400 && row.status < 600, `${code} → ${row.status}`)
    t.ok(wire.has(row.rpc), `${code} → ${row.rpc} is a wire code`)
    t.ok(row.message.length > 0, `${code} has a message`)
    const error = new EdgeError(code as EdgeCodeName)
    t.same([error.code, error.status, error.rpcCode, error.message], [code, row.status, row.rpc, row.message])
  }
  t.same(
    [EdgeCode.MCP_EDGE_TOO_MANY_SESSIONS.status, EdgeCode.MCP_EDGE_SESSION_NOT_FOUND.status, EdgeCode.MCP_EDGE_SESSION_NOT_FOUND.rpc],
    [503, 404, -32001],
  )
})

t.test('an EdgeError carries its detail, data and headers (the row\'s first, the thrower\'s after)', async (t) => {
  const error = new EdgeError('MCP_EDGE_METHOD_NOT_ALLOWED', 'Method Not Allowed: PUT', { data: { x: 1 }, headers: { 'retry-after': '1' } })
  t.same([error.status, error.rpcCode, error.message, error.data], [405, RpcCode.ServerError, 'Method Not Allowed: PUT', { x: 1 }])
  t.same(error.headers, { allow: 'GET, POST, DELETE', 'retry-after': '1' })
  t.equal(new EdgeError('MCP_EDGE_FORBIDDEN_ORIGIN').headers, undefined, 'no headers unless the row or the thrower has some')
  t.equal(new EdgeError('MCP_EDGE_INVALID_REQUEST', 'bad', { status: 431 }).status, 431, 'a status another layer chose passes through')
})

t.test('a wire error refusing a whole request travels with its row', async (t) => {
  const cases: Array<[number, EdgeCodeName, number]> = [
    [RpcCode.ParseError, 'MCP_EDGE_PARSE_ERROR', 400],
    [RpcCode.InvalidRequest, 'MCP_EDGE_INVALID_REQUEST', 400],
    [RpcCode.InvalidParams, 'MCP_EDGE_INVALID_PARAMS', 400],
    [RpcCode.HeaderMismatch, 'MCP_EDGE_HEADER_MISMATCH', 400],
    [RpcCode.MissingCapability, 'MCP_EDGE_MISSING_CAPABILITY', 400],
    [RpcCode.UnsupportedVersion, 'MCP_EDGE_UNSUPPORTED_VERSION', 400],
  ]
  for (const [rpc, code, status] of cases) {
    const refusal = refusalOf(new McpError(rpc, 'why', { d: 1 }))
    t.same([refusal.code, refusal.status, refusal.rpcCode, refusal.message, refusal.data], [code, status, rpc, 'why', { d: 1 }])
  }
  const other = refusalOf(new McpError(-1, 'a handler\'s own code'))
  t.same([other.status, other.rpcCode], [400, -1], 'a code without a row keeps its code, as an invalid request')
})

// ---- no status or code chosen outside the table ------------------------------------------------

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** The code of a file without its comments (a comment may name a status: "answers 404"). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
}

/**
 * A 4xx or 5xx status where a status is set: reply.code(…), writeHead(…), statusCode, status, respond(…, 400).
 * Not a comparison (`error.status !== 404` reads what an upstream answered; it refuses nothing).
 */
const LITERAL_STATUS = /\b(?:code|writeHead|status|statusCode|respond|replyError)\b[^;\n]{0,80}?(?:[(,:?]|(?<![=!<>])=(?!=))\s*[45]\d\d\b/
/** A JSON-RPC error code written as a number. */
const LITERAL_RPC = /-32\d\d\d\b/

/** Lines of gateway/ (the table and the client excepted) that pick a refusal's status or code themselves. */
function outsideTable(): string[] {
  const found: string[] = []
  for (const file of sources(GATEWAY)) {
    const name = relative(GATEWAY, file)
    // The table itself; the client reads the statuses servers answer with, it refuses nothing.
    if (name === 'wire/errors.ts' || name.startsWith('client/')) continue
    code(readFileSync(file, 'utf8')).split('\n').forEach((line, index) => {
      if (LITERAL_STATUS.test(line) || LITERAL_RPC.test(line)) found.push(`${name}:${index + 1}: ${line.trim()}`)
    })
  }
  return found
}

t.test('no literal HTTP status or JSON-RPC code outside the table', async (t) => {
  t.same(outsideTable(), [])
})

t.test('every row is used: a code nothing throws is removed', async (t) => {
  const text = sources(GATEWAY).filter((file) => !file.endsWith(join('wire', 'errors.ts'))).map((file) => readFileSync(file, 'utf8')).join('\n')
  const wireRows = ['MCP_EDGE_PARSE_ERROR'] // reached through refusalOf (its table of wire codes sits in errors.ts)
  t.same(Object.keys(EdgeCode).filter((name) => !new RegExp(`\\b${name}\\b`).test(text) && !wireRows.includes(name)), [])
})

t.test('the check itself finds a literal status or code', async (t) => {
  for (const line of [
    "replyError(reply, 403, RpcCode.ServerError, 'Forbidden')",
    'reply.code(ready ? 200 : 503)',
    "raw.writeHead(404, { 'content-type': 'application/json' })",
    'sink.respond(message, 400)',
    'throw new McpError(-32602, "bad")',
  ]) {
    t.ok(LITERAL_STATUS.test(code(line)) || LITERAL_RPC.test(code(line)), line)
  }
  for (const line of ["reply.code(202).send()", 'if (error.status !== 404) throw error', 'const COMPILATIONS_PER_INSTANCE = 500', "// answers 404 when unknown", 'raw.writeHead(200, sseHeaders(id))']) {
    t.notOk(LITERAL_STATUS.test(code(line)) || LITERAL_RPC.test(code(line)), line)
  }
})
