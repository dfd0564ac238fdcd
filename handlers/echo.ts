/**
 * The quickstart handler (lua-resty-mcp's echo server in mcp-edge's API): one prompt, one resource
 * template with completion, one tool, and a static resource. `config/gateway.yaml` serves it at `/mcp`.
 */
import { defineHandler } from 'mcp-edge'

/** What `echo://{message}` completion offers; the client's typed prefix narrows it. */
const SUGGESTIONS = ['hello', 'hello world', 'help', 'goodbye', 'good morning']

export default defineHandler((mcp, server) => {
  server.register(
    mcp.prompt('echo', ({ message }) => `Please process this message: ${message}`, {
      description: 'Asks the model to process a message',
      arguments: { message: { description: 'The message to process', required: true } },
    }),

    mcp.resourceTemplate('echo://{message}', 'echo', (_uri, { message }) => `Resource echo: ${message}`, {
      description: 'Echoes the message in the URI',
      mimeType: 'text/plain',
      completions: { message: (prefix) => SUGGESTIONS.filter((s) => s.startsWith(prefix)) },
    }),

    mcp.resource('echo://readme', 'readme', () => 'Read echo://<message> to have <message> echoed back.', {
      description: 'How to use the echo resources',
      mimeType: 'text/plain',
    }),

    mcp.tool('echo', ({ message }) => `Tool echo: ${message}`, {
      title: 'Echo',
      description: 'Echoes a message back',
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string', description: 'The message to echo' } },
        required: ['message'],
      },
      annotations: { readOnlyHint: true },
    }),
  )
})
