/**
 * The official SDK 1.x, stateful: one `StreamableHTTPServerTransport` and `McpServer` per session,
 * found by the Mcp-Session-Id header, as the SDK's examples write it (`createMcpExpressApp`).
 * SDK_JSON=1 answers requests as JSON (`enableJsonResponse`, like mcp-edge's JSON path); otherwise
 * every POST answer is an SSE stream (the SDK default, needed to stream progress).
 */
import { randomUUID } from 'node:crypto'
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { sdkEchoServer, type ExpressRequest, type ExpressResponse } from './sdk-echo-server.ts'

const enableJsonResponse = process.env.SDK_JSON === '1'
const transports = new Map<string, StreamableHTTPServerTransport>()
const app = createMcpExpressApp()

app.post('/mcp', async (req: ExpressRequest, res: ExpressResponse) => {
  const sessionId = req.headers['mcp-session-id']
  let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined
  if (transport === undefined) {
    if (sessionId !== undefined || !isInitializeRequest(req.body)) {
      res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null })
      return
    }
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse,
      onsessioninitialized: (id) => void transports.set(id, created),
    })
    created.onclose = () => {
      if (created.sessionId !== undefined) transports.delete(created.sessionId)
    }
    await sdkEchoServer().connect(created)
    transport = created
  }
  await transport.handleRequest(req, res, req.body)
})

app.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
