// A handler module: the gateway calls this once per route and worker at start. Add tools, prompts
// and resources with `mcp.*` and register them; `mcp-edge check` loads it without serving.
import { defineHandler, ToolError } from 'mcp-edge'

export default defineHandler((mcp, server) => {
  server.register(
    mcp.tool(
      'hello',
      ({ name }, ctx) => {
        if (typeof name !== 'string' || name.trim() === '') throw new ToolError('Say who to greet: give a non-empty name')
        ctx.log('info', { greeted: name })
        return `Hello, ${name}!`
      },
      {
        description: 'Greets someone by name',
        inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        annotations: { readOnlyHint: true },
      },
    ),
  )
})
