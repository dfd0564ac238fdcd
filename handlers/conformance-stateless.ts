/**
 * The conformance fixture's 2026-07-28 part (/work/shared/tools/conformance-fixture.md §3): the
 * diagnostic tools and the input-required (multi round-trip) tools and prompt. Written with the same
 * `ctx` calls a session handler uses: in a stateless request `ctx.elicit`, `ctx.createMessage` and
 * `ctx.listRoots` become input requests, answered on the client's retry.
 */
import type { ComponentFactory, JsonObject, RouteServer } from 'mcp-edge'

const NO_ARGS: JsonObject = { type: 'object', properties: {} }
const nameSchema = { type: 'object' as const, properties: { name: { type: 'string' } }, required: ['name'] }
const colorSchema = { type: 'object' as const, properties: { color: { type: 'string' } }, required: ['color'] }
const capital = [{ role: 'user' as const, content: { type: 'text' as const, text: 'What is the capital of France?' } }]

export function registerStatelessFixture(mcp: ComponentFactory, server: RouteServer): void {
  // Registering a name twice is an error: unregister first (each change announces its list).
  // At run time each change goes through the store to every worker: await one before the next.
  const triggerTool = mcp.tool('test_trigger_tool_change', async () => {
    await server.unregisterTool('test_trigger_tool_change')
    await server.register(triggerTool)
    return 'tools/list_changed sent'
  }, { description: 'Re-registers itself, which sends tools/list_changed to listen streams', inputSchema: NO_ARGS })
  const changingPrompt = mcp.prompt('test_changing_prompt', () => 'A prompt that gets re-registered.', {
    description: 'Re-registered by test_trigger_prompt_change',
  })

  server.register(
    triggerTool,
    changingPrompt,
    mcp.tool('test_trigger_prompt_change', async () => {
      await server.unregisterPrompt('test_changing_prompt')
      await server.register(changingPrompt)
      return 'prompts/list_changed sent'
    }, { description: 'Re-registers a prompt, which sends prompts/list_changed to listen streams', inputSchema: NO_ARGS }),

    mcp.tool('test_missing_capability', async (_args, ctx) => {
      // Without the sampling capability this throws -32021 with requiredCapabilities {sampling: {}}.
      if (ctx.session.clientCapabilities.sampling === undefined) await ctx.createMessage(capital, 10)
      return 'The client declared sampling.'
    }, { description: 'Needs the sampling capability', inputSchema: NO_ARGS }),

    mcp.tool('test_streaming_elicitation', (_args, ctx) => {
      ctx.progress(1, 1, 'no server-to-client request on a stateless stream')
      return 'Streamed without asking the client anything.'
    }, { description: 'Streams a notification, never a request', inputSchema: NO_ARGS }),

    mcp.tool('test_logging_tool', (_args, ctx) => {
      ctx.log('info', 'Logging tool ran')
      return 'Logged (delivered only when the request asked for a log level).'
    }, { description: 'Logs one message', inputSchema: NO_ARGS }),

    mcp.tool('test_custom_header', ({ region }) => `Region: ${region}`, {
      description: 'Mirrors its region argument into the Mcp-Param-Region header',
      inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['region'] },
    }),

    mcp.tool('test_input_required_result_elicitation', async (_args, ctx) => {
      const answer = await ctx.elicit('What is your name?', nameSchema, { key: 'user_name' })
      return answer.action === 'accept' ? `Hello, ${String(answer.content?.name)}!` : `No name given (${answer.action}).`
    }, { description: 'Asks for the user name (input-required)', inputSchema: NO_ARGS }),

    mcp.tool('test_input_required_result_sampling', async (_args, ctx) => {
      const result = await ctx.createMessage(capital, 100, { key: 'capital' })
      return `The model answered: ${JSON.stringify(result.content)}`
    }, { description: 'Asks the client model (input-required)', inputSchema: NO_ARGS }),

    mcp.tool('test_input_required_result_list_roots', async (_args, ctx) => {
      const roots = await ctx.listRoots({ key: 'roots' })
      return `Found ${roots.length} root(s)`
    }, { description: 'Lists the client roots (input-required)', inputSchema: NO_ARGS }),

    mcp.tool('test_input_required_result_request_state', async (_args, ctx) => {
      if (ctx.requestState === undefined) ctx.setRequestState('state-ok')
      const answer = await ctx.elicit('Confirm?', { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] }, { key: 'confirm' })
      return `Confirmed (${answer.action}) with ${String(ctx.requestState)}`
    }, { description: 'Keeps handler state across rounds', inputSchema: NO_ARGS }),

    mcp.tool('test_input_required_result_multiple_inputs', async (_args, ctx) => {
      const [name, greeting, roots] = await Promise.all([
        ctx.elicit('What is your name?', nameSchema, { key: 'user_name' }),
        ctx.createMessage([{ role: 'user', content: { type: 'text', text: 'Write a greeting.' } }], 50, { key: 'greeting' }),
        ctx.listRoots({ key: 'client_roots' }),
      ])
      return `Name ${String(name.content?.name)}, greeting ${JSON.stringify(greeting.content)}, ${roots.length} root(s)`
    }, { description: 'Asks for three inputs in one round', inputSchema: NO_ARGS }),

    mcp.tool('test_input_required_result_multi_round', async (_args, ctx) => {
      const name = await ctx.elicit('What is your name?', nameSchema, { key: 'step1' })
      const color = await ctx.elicit('What is your favourite colour?', colorSchema, { key: 'step2' })
      return `${String(name.content?.name)} likes ${String(color.content?.color)}`
    }, { description: 'Asks in two rounds', inputSchema: NO_ARGS }),

    mcp.tool('test_input_required_result_tampered_state', async (_args, ctx) => {
      const answer = await ctx.elicit('What is your name?', nameSchema, { key: 'user_name' })
      return `Hello, ${String(answer.content?.name)}!`
    }, { description: 'Its signed requestState rejects tampering', inputSchema: NO_ARGS }),

    mcp.tool('test_input_required_result_capabilities', async (_args, ctx) => {
      const { elicitation, sampling } = ctx.session.clientCapabilities
      const asks: Promise<unknown>[] = []
      if (elicitation !== undefined) asks.push(ctx.elicit('What is your name?', nameSchema, { key: 'user_name' }))
      if (sampling !== undefined) asks.push(ctx.createMessage(capital, 100, { key: 'capital' }))
      await Promise.all(asks)
      return `Asked only for what the client declared (${asks.length} input(s)).`
    }, { description: 'Asks only for declared capabilities', inputSchema: NO_ARGS }),

    mcp.prompt('test_input_required_result_prompt', async (_args, ctx) => {
      const answer = await ctx.elicit('What context should the prompt use?', {
        type: 'object',
        properties: { context: { type: 'string' } },
        required: ['context'],
      }, { key: 'user_context' })
      return `Use this context: ${String(answer.content?.context)}`
    }, { description: 'Asks for context before building the prompt (input-required)' }),
  )
}
