/**
 * The conformance fixture: what the server scenarios of `@modelcontextprotocol/conformance` call,
 * with the strings they check (/work/shared/tools/conformance-fixture.md §1 and §2; the stateless
 * diagnostics of §3 come later). `config/conformance.yaml` serves it; `test/conformance/` runs the suite.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { defineHandler, ToolError, type ContentBlock, type JsonObject, type RequestContext } from 'mcp-edge'
import { registerStatelessFixture } from './conformance-stateless.ts'
import { registerTasksFixture } from './conformance-tasks.ts'
import { DEFAULTS_SCHEMA, ENUMS_SCHEMA, JSON_SCHEMA_2020_12, PNG_BASE64, WAV_BASE64 } from './conformance-assets.ts'

const NO_ARGS: JsonObject = { type: 'object', properties: {} }

/** An object schema of required string properties. */
function strings(...names: string[]): JsonObject {
  return { type: 'object', properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])), required: names }
}

const pause = (ms: number, ctx: RequestContext) => sleep(ms, undefined, { signal: ctx.signal })

export default defineHandler((mcp, server) => {
  // ---- tools: content types ---------------------------------------------------------------------
  server.register(
    mcp.tool('test_simple_text', () => 'This is a simple text response for testing.', {
      description: 'Returns a simple text response',
      inputSchema: NO_ARGS,
    }),

    mcp.tool('test_image_content', () => [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }], {
      description: 'Returns a 1x1 PNG image',
      inputSchema: NO_ARGS,
    }),

    mcp.tool('test_audio_content', () => [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }], {
      description: 'Returns a short WAV clip',
      inputSchema: NO_ARGS,
    }),

    mcp.tool(
      'test_embedded_resource',
      () => [
        {
          type: 'resource',
          resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
        },
      ],
      { description: 'Returns an embedded text resource', inputSchema: NO_ARGS },
    ),

    mcp.tool(
      'test_multiple_content_types',
      (): ContentBlock[] => [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
        },
      ],
      { description: 'Returns text, an image and an embedded resource', inputSchema: NO_ARGS },
    ),

    mcp.tool(
      'test_error_handling',
      () => {
        throw new ToolError('This tool intentionally returns an error for testing')
      },
      { description: 'Always fails with an isError result', inputSchema: NO_ARGS },
    ),

    mcp.tool('json_schema_2020_12_tool', (args) => `Received: ${JSON.stringify(args)}`, {
      description: 'Declares a JSON Schema 2020-12 input schema that must reach the client verbatim',
      inputSchema: JSON_SCHEMA_2020_12,
    }),
  )

  // ---- tools: notifications and server→client requests during a call ---------------------------
  server.register(
    mcp.tool(
      'test_tool_with_progress',
      async (_args, ctx) => {
        for (const progress of [0, 50, 100]) {
          if (progress > 0) await pause(50, ctx)
          ctx.progress(progress, 100, `Completed step ${progress / 50 + 1} of 3`)
        }
        return 'Progress test completed'
      },
      { description: 'Reports progress 0, 50 and 100 (of 100) before answering', inputSchema: NO_ARGS },
    ),

    mcp.tool(
      'test_tool_with_logging',
      async (_args, ctx) => {
        const steps = ['Tool execution started', 'Tool processing data', 'Tool execution completed']
        for (const [i, data] of steps.entries()) {
          if (i > 0) await pause(50, ctx)
          ctx.log('info', data)
        }
        return 'Logging test completed'
      },
      { description: 'Sends three info log messages before answering', inputSchema: NO_ARGS },
    ),

    mcp.tool(
      'test_sampling',
      async ({ prompt }, ctx) => {
        const result = await ctx.createMessage([{ role: 'user', content: { type: 'text', text: String(prompt) } }], 100)
        const blocks = Array.isArray(result.content) ? result.content : [result.content]
        const text = blocks.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('')
        return `LLM response: ${text}`
      },
      { description: 'Asks the client to sample a completion for the prompt', inputSchema: strings('prompt') },
    ),

    mcp.tool(
      'test_elicitation',
      async ({ message }, ctx) => {
        const result = await ctx.elicit(String(message), {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        })
        return `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`
      },
      { description: 'Asks the user for a username and an email', inputSchema: strings('message') },
    ),

    mcp.tool(
      'test_elicitation_sep1034_defaults',
      async (_args, ctx) => {
        const result = await ctx.elicit('Please review and update the form fields with defaults', DEFAULTS_SCHEMA)
        return `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`
      },
      { description: 'Elicits a form whose fields all have defaults (SEP-1034)', inputSchema: NO_ARGS },
    ),

    mcp.tool(
      'test_elicitation_sep1330_enums',
      async (_args, ctx) => {
        const result = await ctx.elicit('Please select options from the enum fields', ENUMS_SCHEMA)
        return `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`
      },
      { description: 'Elicits every enum form of SEP-1330', inputSchema: NO_ARGS },
    ),

    // SSE polling (SEP-1699): close the POST stream mid-call; the result reaches the client after it
    // reconnects with Last-Event-ID.
    mcp.tool(
      'test_reconnection',
      async (_args, ctx) => {
        await pause(50, ctx)
        ctx.closeStream()
        await pause(300, ctx)
        return 'Reconnection test completed successfully'
      },
      { description: 'Answers after a pause long enough for the client to reconnect (SSE polling)', inputSchema: NO_ARGS },
    ),
  )

  // ---- resources ---------------------------------------------------------------------------------
  // test://static-text comes first: the caching scenario reads the first listed resource.
  server.register(
    mcp.resource('test://static-text', 'Static Text Resource', () => 'This is the content of the static text resource.', {
      description: 'A static text resource for testing',
      mimeType: 'text/plain',
    }),

    mcp.resource('test://static-binary', 'Static Binary Resource', (uri) => [{ uri, mimeType: 'image/png', blob: PNG_BASE64 }], {
      description: 'A static binary resource (a 1x1 PNG) for testing',
      mimeType: 'image/png',
    }),

    mcp.resource('test://watched-resource', 'Watched Resource', () => 'Watched resource content', {
      description: 'A resource clients can subscribe to',
      mimeType: 'text/plain',
    }),

    mcp.resourceTemplate(
      'test://template/{id}/data',
      'Resource Template',
      (uri, { id }) => [
        { uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) },
      ],
      { description: 'A resource template with an id parameter', mimeType: 'application/json' },
    ),
  )

  // ---- prompts -----------------------------------------------------------------------------------
  server.register(
    mcp.prompt('test_simple_prompt', () => 'This is a simple prompt for testing.', {
      description: 'A simple prompt without arguments',
    }),

    mcp.prompt('test_prompt_with_arguments', ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`, {
      description: 'A prompt with two required arguments',
      arguments: {
        arg1: { description: 'First test argument', required: true },
        arg2: { description: 'Second test argument', required: true },
      },
      completions: {
        arg1: (prefix) => ['test', 'testValue1', 'testing', 'example'].filter((v) => v.startsWith(prefix)),
      },
    }),

    mcp.prompt(
      'test_prompt_with_embedded_resource',
      ({ resourceUri = '' }) => [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
      {
        description: 'A prompt that embeds the resource it is given',
        arguments: { resourceUri: { description: 'URI of the resource to embed', required: true } },
      },
    ),

    mcp.prompt(
      'test_prompt_with_image',
      () => [
        { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ],
      { description: 'A prompt with an image' },
    ),
  )
  registerStatelessFixture(mcp, server)
  registerTasksFixture(mcp, server)
})
