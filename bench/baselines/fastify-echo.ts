/**
 * The ceiling: a bare Fastify route answering the benchmark's tools/call body with the same JSON-RPC
 * result the MCP servers send, and nothing else (no sessions, no checks, no MCP).
 */
import Fastify from 'fastify'

interface ToolsCall {
  id: string | number
  params: { arguments: { message: string } }
}

const app = Fastify({ logger: false })

app.post('/mcp', async (request) => {
  const { id, params } = request.body as ToolsCall
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `echo: ${params.arguments.message}` }] } }
})

const url = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
// Where it listens, for a parent that let it pick its port (bench/callgrind-proxy.ts's `raw`).
process.send?.({ listening: url })
process.on('SIGTERM', () => process.exit(0))
