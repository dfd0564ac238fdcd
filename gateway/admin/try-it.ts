/**
 * The dashboard's try-it panel, served by the admin listener: lists a route's tools and calls one
 * through the route's own MCP endpoint with the project's client, as any client would (a fresh
 * session, no credential: a protected route refuses it as it refuses anyone without a token). Bounded:
 * TRY_IT_CONCURRENCY calls at once per process, TRY_IT_TIMEOUT_MS each.
 */
import { McpClient } from '../client/client.ts'
import { RpcError } from '../client/errors.ts'
import { StreamableHttpTransport } from '../client/streamable-http.ts'
import { EdgeError } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

export const TRY_IT_CONCURRENCY = 4
export const TRY_IT_TIMEOUT_MS = 30_000

export interface TryRequest { route: string; method: 'tools/list' | 'tools/call'; name?: string; arguments?: JsonObject }
export interface TryAnswer { ok: true; result: JsonObject }

let running = 0

/** Calls `request` on the gateway at `baseUrl`; rejects with the error table's refusal (the client's error in its message). */
export async function tryIt(baseUrl: string, routes: readonly string[], request: TryRequest): Promise<TryAnswer> {
  if (!routes.includes(request.route)) throw new EdgeError('MCP_EDGE_ADMIN_NOT_FOUND', `Not Found: no route ${request.route}`)
  if (request.method !== 'tools/list' && request.method !== 'tools/call') throw new EdgeError('MCP_EDGE_INVALID_REQUEST', 'Invalid Request: method must be tools/list or tools/call')
  if (request.method === 'tools/call' && typeof request.name !== 'string') throw new EdgeError('MCP_EDGE_INVALID_REQUEST', 'Invalid Request: tools/call needs a name')
  if (running >= TRY_IT_CONCURRENCY) throw new EdgeError('MCP_EDGE_TRY_IT_BUSY', `Too Many Requests: ${TRY_IT_CONCURRENCY} try-it calls are running; retry`)
  running++
  const client = new McpClient(new StreamableHttpTransport({ url: new URL(request.route, baseUrl), standaloneStream: false }), {
    clientInfo: { name: 'mcp-edge-dashboard', version: '1' },
    timeoutMs: TRY_IT_TIMEOUT_MS,
  })
  try {
    await client.initialize({ timeoutMs: TRY_IT_TIMEOUT_MS })
    const result = request.method === 'tools/list'
      ? await client.request('tools/list', {})
      : await client.request('tools/call', { name: request.name!, arguments: request.arguments ?? {} })
    return { ok: true, result }
  } catch (error) {
    const said = error instanceof RpcError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error)
    throw new EdgeError('MCP_EDGE_TRY_IT_FAILED', `The call through ${request.route} failed: ${said}`)
  } finally {
    running--
    await client.close().catch(() => undefined)
  }
}
