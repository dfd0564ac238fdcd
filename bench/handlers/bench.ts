/**
 * The handler every mcp-edge benchmark scenario serves: the same `echo` tool as the baselines
 * (`{message}` → text `echo: …`), the same echo after three progress notifications (the SSE
 * scenario), and a watched resource with a `touch` tool that announces its change (the fan-out).
 */
import { defineHandler } from 'mcp-edge'

/** The resource the fan-out sessions subscribe to. */
export const WATCHED_URI = 'bench://watched'

const MESSAGE_SCHEMA = {
  type: 'object',
  properties: { message: { type: 'string' } },
  required: ['message'],
}

let version = 0

export default defineHandler((mcp, server) => {
  server.register(
    mcp.tool('echo', ({ message }) => `echo: ${String(message)}`, {
      description: 'Echoes a message back',
      inputSchema: MESSAGE_SCHEMA,
    }),

    mcp.tool('echo_progress', ({ message }, ctx) => {
      for (let step = 1; step <= 3; step++) ctx.progress(step, 3)
      return `echo: ${String(message)}`
    }, {
      description: 'Sends three progress notifications, then echoes the message',
      inputSchema: MESSAGE_SCHEMA,
    }),

    // Read-only: a proxy route may cache its results (bench/catalogue-cache.ts, `tools.lookup.cache`).
    mcp.tool('lookup', ({ message }) => `echo: ${String(message)}`, {
      description: 'Echoes a message back, read-only',
      inputSchema: MESSAGE_SCHEMA,
      annotations: { readOnlyHint: true },
    }),

    mcp.tool('touch', async () => {
      version++
      await server.resourceUpdated(WATCHED_URI)
      return `touched ${version}`
    }, { description: `Changes ${WATCHED_URI} and notifies its subscribers` }),

    mcp.resource(WATCHED_URI, 'watched', () => `version ${version}`, { mimeType: 'text/plain' }),
  )

  // The edge-session-catalogue row: each session gets a data resource of its own once initialized,
  // so its requests are served from its own catalogue view.
  if (server.options.session_catalogue === true) {
    server.on('initialized', (session) => session.register(mcp.resource('bench://mine', 'mine', `session ${session.id}`)))
  }
})
