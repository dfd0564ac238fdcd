/**
 * An unknown tool gets one answer on every kind of route, in both eras (issue 26): the spec's JSON-RPC
 * error -32602 `Unknown tool: <name as called>`. A handler route gave it; a proxy route passed on
 * the SDK-built upstream's tool result `isError` "MCP error -32602: Tool nope not found" (a doubled
 * prefix once the client's SDK printed it). Through server-everything (the SDK 1.x McpServer) over
 * Streamable HTTP and stdio, unprefixed and prefixed, with the official SDK client too.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import path from 'node:path'
import t from 'tap'
import { gatewayWith } from '../e2e/harness.ts'
import { everythingOverHttp, everythingServer } from '../fixtures/everything-server.ts'

t.setTimeout(120_000)
const ECHO = path.resolve('handlers/echo.ts')
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const MODERN = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }

type RpcAnswer = { id?: unknown; result?: { isError?: boolean; content?: unknown }; error?: { code: number; message: string } }

/** The JSON-RPC answer of a POST, read from JSON or from the SSE stream's last message. */
async function answerOf(response: Response): Promise<RpcAnswer> {
  const text = await response.text()
  return JSON.parse(text.startsWith('{') ? text : text.split('\n').filter((line) => line.startsWith('data: {')).at(-1)!.slice(6)) as RpcAnswer
}

async function sessionCall(url: string, name: string): Promise<RpcAnswer> {
  const init = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'unknown-tool', version: '1' } } }) })
  await init.text()
  const session = { ...HEADERS, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
  await fetch(url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) }).then((r) => r.text())
  const answer = await answerOf(await fetch(url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {} } }) }))
  await fetch(url, { method: 'DELETE', headers: session })
  return answer
}

async function statelessCall(url: string, name: string): Promise<RpcAnswer> {
  return answerOf(await fetch(url, {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { _meta: MODERN, name, arguments: {} } }),
  }))
}

t.test('handler routes and proxy routes answer an unknown tool alike, in both eras', async (t) => {
  const { port } = await everythingOverHttp(t, 20_000)
  const http = { name: 'everything', url: `http://127.0.0.1:${port}/mcp`, timeout: 20 }
  const stdio = { name: 'everything', command: ['node', everythingServer, 'stdio'], timeout: 20 }
  const gateway = await gatewayWith(t, [
    { location: '/local', handler: ECHO, server: { name: 'echo', version: '1.0.0' } },
    { location: '/http', server: { name: 'proxy', version: '1.0.0' }, upstreams: [http], prefix: 'never' },
    { location: '/prefixed', server: { name: 'proxy', version: '1.0.0' }, upstreams: [http], prefix: 'always' },
    { location: '/stdio', server: { name: 'proxy', version: '1.0.0' }, upstreams: [stdio], prefix: 'never' },
    { location: '/mixed', handler: ECHO, server: { name: 'mixed', version: '1.0.0' }, upstreams: [http], prefix: 'never' },
  ], { request_state: { key: 'unknown-tool-test-key-0123456' } })
  const cases: Array<[string, string]> = [
    ['/local', 'nope'], ['/http', 'nope'], ['/prefixed', 'everything__nope'], ['/prefixed', 'nope'], ['/stdio', 'nope'], ['/mixed', 'nope'],
  ]
  for (const [location, name] of cases) {
    const url = `${gateway.url}${location}`
    for (const [era, call] of [['2025-11-25', sessionCall], ['2026-07-28', statelessCall]] as const) {
      const answer = await call(url, name)
      t.same({ id: answer.id, error: answer.error, result: answer.result }, { id: 7, error: { code: -32602, message: `Unknown tool: ${name}` }, result: undefined }, `${location} ${name}, ${era}: JSON-RPC -32602 "Unknown tool: ${name}"`)
    }
  }
  // Known tools still answer through the same routes (the check recognises only "no such tool").
  t.notOk((await sessionCall(`${gateway.url}/http`, 'echo')).error, 'a known upstream tool still answers (with its own complaint about arguments, if any)')

  // What the official SDK client shows: the same error on both kinds of route, one prefix.
  for (const location of ['/local', '/http']) {
    const client = new Client({ name: 'sdk', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}${location}`))
    await client.connect(transport)
    const thrown = await client.callTool({ name: 'nope', arguments: {} }).then(() => undefined, (error: unknown) => error)
    t.ok(thrown instanceof McpError, `${location}: the SDK client throws an McpError`)
    t.equal((thrown as McpError).code, -32602)
    t.equal((thrown as McpError).message, 'MCP error -32602: Unknown tool: nope', `${location}: one prefix, the SDK's own`)
    await transport.terminateSession().catch(() => undefined)
    await client.close()
  }
})
