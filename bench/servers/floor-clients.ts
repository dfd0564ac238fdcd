/**
 * Two more measuring sticks for the proxy hop's CPU ratio (bench/proxy-floor.ts), between the bare
 * MCP-aware proxy of floor-servers.mjs (`mcp-proxy`) and mcp-edge's proxy route: a bare node:http
 * server in front, and the upstream exchange made with mcp-edge's own client code, in two depths.
 *
 *   node --import tsx floor-clients.ts lean-exchange URL    the request parsed, its id replaced, the body
 *                                                          sent on the lean HTTP/1.1 pool (client/http1.ts),
 *                                                          the answer parsed and its id put back
 *   node --import tsx floor-clients.ts gateway-client URL   the call made through McpClient on a
 *                                                          StreamableHttpTransport, one upstream session per
 *                                                          downstream one (as a proxy route's link), the
 *                                                          result passed on unread (resultAsSent)
 *
 * The downstream session id names the upstream session to use (`lean-exchange` sends it on, as
 * `mcp-proxy` does; `gateway-client` opens its own once). No access phase, limits, call events, log
 * lines or checks: what is left between these and the proxy route is the gateway's server side of an
 * asynchronous (upstream-bound) request. Prints `PORT n`.
 */
import http from 'node:http'
import { McpClient } from '../../gateway/client/client.ts'
import { keepAliveAgents } from '../../gateway/client/http-exchange.ts'
import { StreamableHttpTransport } from '../../gateway/client/streamable-http.ts'
import { LightAbort } from '../../gateway/wire/abort-like.ts'
import type { JsonRpcMessage } from '../../gateway/wire/jsonrpc.ts'
import { messageText } from '../../gateway/wire/message-text.ts'

const [kind, upstreamUrl] = process.argv.slice(2)
if (upstreamUrl === undefined || (kind !== 'lean-exchange' && kind !== 'gateway-client')) throw new Error('usage: floor-clients.ts lean-exchange|gateway-client URL')
const url = new URL(upstreamUrl)
const agents = keepAliveAgents()
const exchange = agents.http.exchange()
const MAX_BODY = 16 * 1024 * 1024

interface Call { id: string | number; method: string; params: Record<string, unknown> }

/** Each downstream session's upstream headers (lean-exchange), made at its first call. */
const headersOf = new Map<string, Record<string, string>>()
let nextId = 1

async function leanExchange(call: Call, sessionId: string, version: string): Promise<string> {
  let headers = headersOf.get(sessionId)
  if (headers === undefined) {
    headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': version }
    headersOf.set(sessionId, headers)
  }
  const id = nextId++
  const answer = await exchange(url, 'POST', headers, JSON.stringify({ jsonrpc: '2.0', id, method: call.method, params: call.params }), new LightAbort())
  const parsed = JSON.parse(answer.textNow?.(MAX_BODY) ?? (await answer.text(MAX_BODY))) as { id: unknown; result: unknown }
  if (parsed.id !== id) throw new Error(`the answer to ${id} came with id ${String(parsed.id)}`)
  return JSON.stringify({ jsonrpc: '2.0', id: call.id, result: parsed.result })
}

/** Each downstream session's own upstream client (gateway-client), opened at its first call. */
const clients = new Map<string, Promise<McpClient>>()

async function openClient(): Promise<McpClient> {
  const transport = new StreamableHttpTransport({ url, agents, standaloneStream: false, endSessionOnClose: false })
  const client = new McpClient(transport, { clientInfo: { name: 'floor-client', version: '1.0.0' }, timeoutMs: 10_000 })
  await client.initialize({ capabilities: {} })
  return client
}

async function gatewayClient(call: Call, sessionId: string): Promise<string> {
  let opening = clients.get(sessionId)
  if (opening === undefined) clients.set(sessionId, (opening = openClient()))
  const client = await opening
  const result = await client.request(call.method, call.params as never, { timeoutMs: 10_000, resultAsSent: true })
  return messageText({ jsonrpc: '2.0', id: call.id, result } as JsonRpcMessage)
}

const server = http.createServer((request, response) => {
  let text = ''
  request.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
  request.on('end', () => {
    const call = JSON.parse(text) as Call
    const sessionId = request.headers['mcp-session-id'] as string
    const answered = kind === 'lean-exchange' ? leanExchange(call, sessionId, request.headers['mcp-protocol-version'] as string) : gatewayClient(call, sessionId)
    answered.then(
      (body) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(body)
      },
      (error: unknown) => {
        response.writeHead(502, { 'content-type': 'text/plain' })
        response.end(String(error))
      },
    )
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(`PORT ${(server.address() as { port: number }).port}`))
