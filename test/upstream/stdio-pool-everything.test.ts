// The reference server @modelcontextprotocol/server-everything (from node_modules, never fetched)
// over stdio through the pool, driven by the project's McpClient: two sessions share one child.
import t from 'tap'
import { alive, connect, everythingServer, poolFor } from './stdio-harness.ts'

const text = (result: { content: unknown[] }): string => (result.content[0] as { text: string }).text

t.test('server-everything through a shared pool: lists, calls, progress, sampling', async (t) => {
  const { pool } = poolFor(t, { name: 'everything', command: ['node', everythingServer, 'stdio'], pool: { max: 1 } })
  const sampling = (): { role: 'assistant'; content: { type: 'text'; text: string }; model: string } => ({ role: 'assistant', content: { type: 'text', text: 'sampled by a' }, model: 'm' })
  const a = await connect(t, pool, { session: 'a' }, { sampling })
  const b = await connect(t, pool, { session: 'b' })
  t.match(a.serverInfo, { name: 'mcp-servers/everything' })
  t.equal(a.protocolVersion, '2025-11-25')
  t.same(b.server, a.server, 'the second session is answered from the same handshake')
  const [child] = pool.status()
  t.equal(pool.status().length, 1, 'one child for both')

  const [toolsA, toolsB] = await Promise.all([a.listTools(), b.listTools()])
  t.ok(toolsA.some((tool) => tool.name === 'echo') && toolsA.length === toolsB.length, 'both list the tools')
  t.ok((await a.listResources()).length > 0, 'resources')
  t.ok((await b.listPrompts()).some((prompt) => prompt.name === 'simple-prompt'), 'prompts')
  t.ok((await a.listResourceTemplates()).length > 0, 'templates')

  const [echoA, echoB] = await Promise.all([a.callTool('echo', { message: 'from a' }), b.callTool('echo', { message: 'from b' })])
  t.equal(text(echoA), 'Echo: from a')
  t.equal(text(echoB), 'Echo: from b')

  const progressA: number[] = []
  const progressB: number[] = []
  await Promise.all([
    a.callTool('trigger-long-running-operation', { duration: 0.3, steps: 3 }, { onProgress: (value) => void progressA.push(value) }),
    b.callTool('trigger-long-running-operation', { duration: 0.3, steps: 3 }, { onProgress: (value) => void progressB.push(value) }),
  ])
  t.same(progressA, [1, 2, 3], 'a got its own progress')
  t.same(progressB, [1, 2, 3], 'b got its own progress')

  t.match(text(await a.callTool('trigger-sampling-request', { prompt: 'hi', maxTokens: 5 })), /sampled by a/, 'sampling reaches the one session in flight')
  await b.ping()
  await pool.close()
  t.notOk(alive(child!.pid!), 'closing the pool ends the child')
})
