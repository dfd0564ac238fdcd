/**
 * `mcp-edge/client`: an MCP client over Streamable HTTP, WebSocket, HTTP+SSE (2024-11-05; its `exchange` from fetchExchange or nodeExchange) or stdio.
 *
 *   import { McpClient, StreamableHttpTransport } from 'mcp-edge/client'
 *   const client = new McpClient(new StreamableHttpTransport({ url: 'http://127.0.0.1:8080/mcp' }))
 *   await client.initialize()
 *   console.log(await client.callTool('echo', { message: 'hi' }))
 *   await client.close()
 */
export { McpClient, CLIENT_PROTOCOL_VERSION } from './client.ts'
export { StreamableHttpTransport, type StreamableHttpOptions } from './streamable-http.ts'
export { WebSocketTransport, type WebSocketOptions } from './websocket.ts'
export { LegacySseTransport, type LegacySseOptions } from './legacy-sse.ts'
export { fetchExchange, keepAliveAgents, nodeExchange } from './http-exchange.ts'
export { StdioTransport, type StdioOptions } from './stdio.ts'
export type { Transport } from './transport.ts'
export type { TlsOptions, ConnectionOptions } from './connection-options.ts'
export { RpcError, TransportError, TimeoutError, CancelledError, ProtocolError, ClientErrorCode, type ClientErrorCodeName } from './errors.ts'
export { SseParser, readSse, type SseEvent } from './sse-parser.ts'
export type * from './types.ts'
export type {
  CallToolResult,
  ClientCapabilities,
  CompletionResult,
  ContentBlock,
  CreateMessageResult,
  ElicitationSchema,
  ElicitResult,
  GetPromptResult,
  Implementation,
  JsonObject,
  LogLevel,
  ReadResourceResult,
  ResourceContents,
  Root,
  SamplingMessage,
  ServerCapabilities,
} from '../wire/mcp-types.ts'
export type { JsonRpcMessage, RequestId } from '../wire/jsonrpc.ts'
