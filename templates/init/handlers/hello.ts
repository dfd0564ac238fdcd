// A handler module: the gateway calls this once per route and worker at start. Add tools, prompts
// and resources with `mcp.*` and register them; `mcp-edge check` loads it without serving.
//
// A tool's arguments are typed from its inputSchema (written inline, or declared `as const`): here
// `name` is a string and `excited` a boolean or undefined. The gateway validates every call against
// the same schema before the callback runs, so the types hold at run time too.
import { defineHandler, ToolError } from 'mcp-edge'

export default defineHandler((mcp, server) => {
  server.register(
    mcp.tool(
      'hello',
      ({ name, excited }, ctx) => {
        if (name.trim() === '') throw new ToolError('Say who to greet: give a non-empty name')
        ctx.log('info', { greeted: name })
        return `Hello, ${name}${excited === true ? '!!!' : '!'}`
      },
      {
        description: 'Greets someone by name',
        inputSchema: {
          type: 'object',
          properties: { name: { type: 'string' }, excited: { type: 'boolean', description: 'Greet with enthusiasm' } },
          required: ['name'],
        },
        annotations: { readOnlyHint: true },
      },
    ),
  )
})
