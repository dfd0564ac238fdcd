/**
 * The conformance fixture's tasks part: the tools the `tasks-*` scenarios (the 2026-07-28
 * `io.modelcontextprotocol/tasks` extension, SEP-2663) call. Each is an ordinary callback with a
 * `taskSupport`; the gateway makes the task, keeps it in the store and answers tasks/get, tasks/update
 * and tasks/cancel on any worker.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { McpError, RpcCode, ToolError, type ComponentFactory, type RequestContext, type RouteServer } from 'mcp-edge'

const confirmSchema = { type: 'object' as const, properties: { confirm: { type: 'boolean' } }, required: ['confirm'] }
const nameSchema = { type: 'object' as const, properties: { name: { type: 'string' } }, required: ['name'] }

const pause = (ms: number, ctx: RequestContext) => sleep(ms, undefined, { signal: ctx.signal })

export function registerTasksFixture(mcp: ComponentFactory, server: RouteServer): void {
  server.register(
    mcp.tool('greet', ({ name }) => `Hello, ${name}!`, {
      description: 'Greets by name (never a task)',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    }),

    mcp.tool('slow_compute', async ({ seconds, label }, ctx) => {
      const ms = Math.max(0, seconds ?? 0) * 1000
      if (ms > 0) await pause(ms, ctx)
      return `Computed ${label ?? 'result'} after ${seconds ?? 0} s`
    }, {
      description: 'Sleeps `seconds` then answers; runs as a task when the client takes tasks',
      inputSchema: { type: 'object', properties: { seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } } },
      taskSupport: 'optional',
    }),

    mcp.tool('failing_job', async (_args, ctx) => {
      await pause(1000, ctx)
      throw new ToolError('Tool execution failed')
    }, {
      description: 'Fails as a tool (isError) after a second; always a task',
      inputSchema: { type: 'object', properties: {} },
      taskSupport: 'required',
    }),

    mcp.tool('protocol_error_job', async (_args, ctx) => {
      await pause(200, ctx)
      throw new McpError(RpcCode.InternalError, 'Protocol task failed')
    }, {
      description: 'Fails with a protocol error: the task ends failed',
      inputSchema: { type: 'object', properties: {} },
      taskSupport: 'optional',
    }),

    mcp.tool('confirm_delete', async ({ filename }, ctx) => {
      const answer = await ctx.elicit(`Delete ${filename}?`, confirmSchema)
      const confirmed = answer.action === 'accept' && answer.content?.confirm === true
      return confirmed ? `Deleted ${filename}` : `Kept ${filename}`
    }, {
      description: 'Asks for confirmation inside the task, then answers',
      inputSchema: { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] },
      taskSupport: 'optional',
    }),

    mcp.tool('multi_input', async (_args, ctx) => {
      const [first, second] = await Promise.all([
        ctx.elicit('First name?', nameSchema, { key: 'first' }),
        ctx.elicit('Second name?', nameSchema, { key: 'second' }),
      ])
      const name = (answer: typeof first) => String(answer.content?.name ?? answer.action)
      return `Got ${name(first)} and ${name(second)}`
    }, {
      description: 'Asks two questions at once inside the task',
      inputSchema: { type: 'object', properties: {} },
      taskSupport: 'optional',
    }),

    mcp.tool('test_tool_with_task', async (_args, ctx) => {
      await pause(100, ctx)
      return `Hello, ${String(ctx.task?.prepared ?? 'stranger')}!`
    }, {
      description: 'Asks a name in the request (input_required), then runs as a task',
      inputSchema: { type: 'object', properties: {} },
      taskSupport: 'required',
      prepare: async (_args, ctx) => {
        const answer = await ctx.elicit('What is your name?', nameSchema, { key: 'user_name' })
        return answer.action === 'accept' ? answer.content?.name : answer.action
      },
    }),
  )
}
