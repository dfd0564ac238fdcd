// One MCP conversation, written once and run over every client transport against the gateway's
// live fixture (Hono's `common.case.test.ts`, lua-resty-mcp's scenario matrix): lifecycle, lists,
// progress and cancellation, logging, sampling, elicitation, roots, subscriptions, list_changed
// and a wire error. Each transport's test only says how to connect.
import type { Test } from 'tap'
import { CancelledError, McpClient, RpcError, type LogMessage, type Transport } from '../../gateway/client/index.ts'
import { eventually, text } from './harness.ts'

/**
 * How a transport reaches a gateway serving the live fixture at /live; whatever it starts closes at
 * teardown. `observed` is the fixture's, when the gateway runs in this process.
 */
export type Connect = (t: Test) => Promise<{ transport: Transport; observed?: { aborted: boolean; completed: boolean } }>

const initialRoots = [{ uri: 'file:///a', name: 'a' }, { uri: 'file:///b' }]

/** Runs the conversation as the subtest `name` over the transport `connect` gives. */
export function transportContract(t: Test, name: string, connect: Connect): Promise<unknown> {
  return t.test(name, async (t) => {
    const { transport, observed } = await connect(t)
    const logs: LogMessage[] = []
    const updated: string[] = []
    let toolsChanged = 0
    const client = new McpClient(transport, { clientInfo: { name: 'contract', version: '1.0.0' }, timeoutMs: 20_000 })
    t.teardown(() => client.close())

    const init = await client.initialize({
      roots: initialRoots,
      sampling: (params) => {
        t.match(params, { maxTokens: 50, systemPrompt: 'be brief', messages: [{ role: 'user', content: { type: 'text', text: 'say hi' } }] })
        return { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'tiny' }
      },
      elicitation: (params) => {
        t.equal(params.message, 'What is your name?')
        return { action: 'accept', content: { name: 'Grace' } }
      },
      on: { log: (message) => logs.push(message), toolsListChanged: () => toolsChanged++ },
    })
    t.match(init.serverInfo, { name: 'live', version: '1.0.0' }, 'initialize: server info')
    t.type(init.protocolVersion, 'string')
    t.ok(init.capabilities.tools, 'initialize: tools capability')

    const tools = await client.listTools()
    t.ok(['slow', 'levels', 'ask', 'sample', 'roots', 'touch', 'grow'].every((tool) => tools.some((listed) => listed.name === tool)), 'listTools')
    t.same(await client.listPrompts(), [], 'listPrompts')
    t.match(await client.listResources(), [{ uri: 'live://counter', name: 'counter' }], 'listResources')

    const progress: number[] = []
    const done = await client.callTool('slow', { steps: 3 }, { onProgress: (value) => void progress.push(value) })
    t.same(progress, [1, 2, 3], 'progress 1..n before the result')
    t.equal(text(done), 'done after 3 steps')

    const cancelled = await client.callTool('slow', { steps: 50 }, { onProgress: (value) => value < 2 }).catch((error: unknown) => error)
    t.type(cancelled, CancelledError, 'returning false from onProgress cancels')
    if (observed !== undefined) {
      await eventually(() => observed.aborted)
      t.equal(observed.completed, false, 'the handler was told to stop')
    }
    await client.ping()
    t.pass('the session goes on after a cancellation')

    await client.setLogLevel('warning')
    logs.length = 0
    t.equal(text(await client.callTool('levels')), 'logged')
    t.same(logs.map((log) => `${log.level}:${String(log.data)}`), ['warning:a warning message', 'error:a error message'], 'only warning and above')

    t.equal(text(await client.callTool('sample', { prompt: 'say hi' })), 'model tiny said: hi', 'sampling')
    t.equal(text(await client.callTool('ask')), 'Hello, Grace', 'elicitation')

    t.equal(text(await client.callTool('roots')), 'file:///a,file:///b', 'roots from initialize')
    await client.exposeRoots([{ uri: 'file:///c' }])
    t.equal(text(await client.callTool('roots')), 'file:///c', 'roots after exposeRoots')

    await client.subscribeResource('live://counter', (uri) => updated.push(uri))
    await client.callTool('touch')
    await eventually(() => updated.length > 0)
    t.same(updated, ['live://counter'], 'resources/updated reaches the subscriber')

    const before = toolsChanged
    await client.callTool('grow')
    await eventually(() => toolsChanged > before)
    t.ok((await client.listTools()).some((tool) => tool.name.startsWith('grown_')), 'tools/list_changed, and the new tool is listed')

    const unknown = await client.callTool('no_such_tool').catch((error: unknown) => error)
    t.type(unknown, RpcError, 'an unknown tool is a JSON-RPC error')
    t.match(unknown, { code: -32602 })
  })
}
