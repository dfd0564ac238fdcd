/** The official SDK's `McpServer` with the benchmark's tools, shared by the stateful and stateless baselines. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'

/** What the baselines use of Express's request and response (the SDK brings Express, not its types). */
export type ExpressRequest = IncomingMessage & { body: unknown }
export type ExpressResponse = ServerResponse & { status(code: number): { json(body: unknown): void } }

/** A new server with `echo` and `echo_progress` (three progress notifications, then the echo). */
export function sdkEchoServer(): McpServer {
  const server = new McpServer({ name: 'sdk-bench', version: '1.0.0' })
  server.registerTool('echo', { description: 'Echoes a message back', inputSchema: { message: z.string() } }, ({ message }) => ({
    content: [{ type: 'text', text: `echo: ${message}` }],
  }))
  server.registerTool(
    'echo_progress',
    { description: 'Sends three progress notifications, then echoes the message', inputSchema: { message: z.string() } },
    async ({ message }, extra) => {
      const progressToken = extra._meta?.progressToken
      if (progressToken !== undefined) {
        for (let progress = 1; progress <= 3; progress++) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 3 } })
        }
      }
      return { content: [{ type: 'text', text: `echo: ${message}` }] }
    },
  )
  return server
}
