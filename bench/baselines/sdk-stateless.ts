/**
 * The official SDK 1.x, stateless (`sessionIdGenerator: undefined`): a new `McpServer` and transport
 * for every request, closed when the response closes, as the SDK recommends for stateless servers.
 * Answers as JSON (`enableJsonResponse`) so it compares with the JSON baselines.
 */
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { sdkEchoServer, type ExpressRequest, type ExpressResponse } from './sdk-echo-server.ts'

const app = createMcpExpressApp()

app.post('/mcp', async (req: ExpressRequest, res: ExpressResponse) => {
  const server = sdkEchoServer()
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  res.on('close', () => {
    void transport.close()
    void server.close()
  })
  await server.connect(transport)
  await transport.handleRequest(req, res, req.body)
})

app.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
