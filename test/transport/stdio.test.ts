// `mcp-edge stdio` as a real child process: the official SDK stdio client for the features, raw
// lines for what a well-behaved client never sends.
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { fixture } from '../e2e/harness.ts'
import { abandonSlow, slowWithProgress } from '../e2e/live-calls.ts'

// Each test has its own child process, and most of a test's time is that child starting (tsx
// compiling the gateway): run them side by side, and allow for a busy machine.
t.jobs = 4
t.setTimeout(120_000)

const repo = fileURLToPath(new URL('../../', import.meta.url))
const bin = path.join(repo, 'gateway/bin.mjs')
const text = (result: { [key: string]: unknown }) => (result.content as { text: string }[])[0]!.text
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

interface Dir { testdir(files: Record<string, string>): string }

/** A config with the live fixture at /live (and a second route, so --route matters). */
function configFile(t: Dir): string {
  const dir = t.testdir({
    'gateway.yaml': `log: { level: info }
body_limit: 2048
routes:
  - location: /live
    handler: ${JSON.stringify(fixture('live'))}
    server: { name: live, version: '1.0.0' }
  - location: /other
    handler: ${JSON.stringify(fixture('live'))}
    server: { name: other, version: '1.0.0' }
`,
  })
  return path.join(dir, 'gateway.yaml')
}

/** The SDK client on a spawned `mcp-edge stdio`; `stderr` collects the child's log lines. */
async function connectStdio(t: Dir & { teardown(fn: () => unknown): void }, capabilities = {}, setup?: (client: Client) => void) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'stdio', '--config', configFile(t), '--route', '/live'], cwd: repo, stderr: 'pipe' })
  const logs: string[] = []
  let partial = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n')
    partial = lines.pop()!
    logs.push(...lines)
  })
  const client = new Client({ name: 'stdio-test', version: '1.0.0' }, { capabilities })
  setup?.(client)
  await client.connect(transport)
  t.teardown(() => client.close())
  // Every message as it comes off the pipe, before the SDK's handling (which runs notification
  // handlers a microtask late: a progress notification read together with the result is dropped).
  const received: { method?: string; id?: unknown; params?: { progress?: number } }[] = []
  const handle = transport.onmessage!
  transport.onmessage = (message) => {
    received.push(message as (typeof received)[number])
    handle(message)
  }
  return { client, logs, received }
}

interface Child {
  child: ChildProcessWithoutNullStreams
  send(line: string): void
  next(): Promise<Record<string, any>>
  stdout: string[]
  stderr: () => string
  exited: Promise<number | null>
}

/** A raw `mcp-edge stdio` child: lines in, every stdout line kept as is. */
function spawnRaw(t: Dir & { teardown(fn: () => unknown): void }, args: string[] = ['--route', '/live']): Child {
  const child = spawn(process.execPath, [bin, 'stdio', '--config', configFile(t), ...args], { cwd: repo })
  t.teardown(() => child.kill('SIGKILL'))
  const stdout: string[] = []
  const waiting: ((message: Record<string, any>) => void)[] = []
  const parsed: Record<string, any>[] = []
  let partial = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n')
    partial = lines.pop()!
    for (const line of lines) {
      stdout.push(line)
      const message = JSON.parse(line)
      const waiter = waiting.shift()
      if (waiter !== undefined) waiter(message)
      else parsed.push(message)
    }
  })
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return {
    child,
    send: (line) => child.stdin.write(`${line}\n`),
    next: () => (parsed.length > 0 ? Promise.resolve(parsed.shift()!) : new Promise((resolve) => waiting.push(resolve))),
    stdout,
    stderr: () => stderr,
    exited,
  }
}

t.test('initialize, tools/list, tools/call with progress and sampling over the SDK stdio transport', async (t) => {
  const { client, received } = await connectStdio(t, { sampling: {} }, (c) =>
    c.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      role: 'assistant',
      model: 'stdio-model',
      content: { type: 'text', text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` },
    })))
  const seen = await slowWithProgress(t, client)
  const call = received.findIndex((message) => message.id !== undefined && message.method === undefined && JSON.stringify(message).includes('done after 3 steps'))
  t.same(received.slice(0, call).filter((message) => message.method === 'notifications/progress').map((message) => message.params?.progress), [1, 2, 3], 'every progress notification reaches the client, in order, before the result')
  t.same(seen, [1, 2, 3].slice(0, seen.length), "the SDK's handler sees them in order (it drops those read together with the result: a busy machine reads them all at once)")
  t.equal(text(await client.callTool({ name: 'sample', arguments: { prompt: 'hi' } })), 'model stdio-model said: echo hi')
})

t.test('cancellation reaches the handler: its request ends without a response', async (t) => {
  const { client, logs } = await connectStdio(t)
  await abandonSlow(t, client)
  const deadline = Date.now() + 3000
  const cancelled = () => logs.some((line) => /"method":"tools\/call","outcome":"cancelled"/.test(line))
  while (!cancelled() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(cancelled(), 'the gateway logged the request as cancelled')
  t.same(await client.ping(), {}, 'the session goes on')
})

t.test('raw lines: malformed JSON gets a -32700 line, the process keeps running, stdout is JSON-RPC only', async (t) => {
  const raw = spawnRaw(t)
  raw.send('{"jsonrpc": "2.0", "id": 1, "method": ')
  t.match(await raw.next(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: /^Parse error/ } })
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }))
  t.match(await raw.next(), { id: 2, error: { code: -32600, message: /first request must be initialize/ } })
  raw.send(JSON.stringify({ nope: true }))
  t.match(await raw.next(), { id: null, error: { code: -32600 } })
  raw.send(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: 'x'.repeat(3000) } })}`)
  t.match(await raw.next(), { id: null, error: { code: -32600, message: /over 2048 bytes/ } })
  raw.send('')
  raw.send(`${JSON.stringify(initialize)}\r`)
  t.match(await raw.next(), { id: 1, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'live' } } })
  raw.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'levels' } }))
  const seen: Record<string, any>[] = []
  for (let message = await raw.next(); ; message = await raw.next()) {
    seen.push(message)
    if (message.id === 4) break
  }
  t.same(seen.filter((m) => m.method === 'notifications/message').map((m) => m.params.level), ['debug', 'info', 'warning', 'error'])
  raw.child.stdin.end()
  t.equal(await raw.exited, 0, 'exits 0 when stdin ends')
  for (const line of raw.stdout) t.match(JSON.parse(line), { jsonrpc: '2.0' }, 'a JSON-RPC line')
  t.match(raw.stderr(), /"msg":"stdio session started"/, 'logs go to stderr')
})

t.test('stdin ending with a request in flight: its response still comes, then exit 0', async (t) => {
  const raw = spawnRaw(t, ['--route', '/other'])
  raw.send(JSON.stringify(initialize))
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { steps: 3 } } }))
  raw.child.stdin.end()
  t.match(await raw.next(), { id: 1, result: { serverInfo: { name: 'other' } } }, '--route picks the route')
  t.match(await raw.next(), { id: 2, result: { content: [{ text: 'done after 3 steps' }] } })
  t.equal(await raw.exited, 0)
})

t.test('a client that reads slowly after its stdin ended still gets every answer before the exit (stdout a socket)', async (t) => {
  // stdout a Unix socket, as some supervisors give: Node writes it asynchronously (a pipe, on Linux,
  // synchronously), so what the socket has not taken waits in the child when its session ends.
  // A short path: a socket's address is at most 107 bytes.
  const dir = mkdtempSync(path.join(tmpdir(), 'stdio-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const address = path.join(dir, 'out.sock')
  const server = createServer()
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve))
  await new Promise<void>((resolve) => server.listen(address, resolve))
  t.teardown(() => server.close())
  const ours = connect(address)
  await new Promise((resolve) => ours.once('connect', resolve))
  const theirs = await accepted
  theirs.pause()
  const child = spawn(process.execPath, [bin, 'stdio', '--config', configFile(t), '--route', '/live'], { cwd: repo, stdio: ['pipe', ours, 'ignore'] })
  t.teardown(() => child.kill('SIGKILL'))
  ours.destroy()
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const lines = [JSON.stringify(initialize), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })]
  const count = 400
  for (let id = 2; id < count + 2; id++) lines.push(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }))
  child.stdin.end(`${lines.join('\n')}\n`)
  // Longer than the grace the process gives itself to exit once its session is over.
  await new Promise((resolve) => setTimeout(resolve, 2500))
  let text = ''
  theirs.on('data', (chunk: Buffer) => (text += chunk.toString()))
  const ended = new Promise((resolve) => theirs.once('close', resolve))
  theirs.resume()
  t.equal(await exited, 0)
  await ended
  // Requests are served side by side: their answers may come in any order.
  const ids = text.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { id: number }).id).sort((a, b) => a - b)
  t.same(ids, Array.from({ length: count + 1 }, (_, n) => n + 1), `all ${count + 1} answers, each once, none cut off (${ids.length} came)`)
})

t.test('stdin ending while the server waits for the client: the wait fails at once, then exit 0', async (t) => {
  const raw = spawnRaw(t)
  raw.send(JSON.stringify({ ...initialize, params: { ...initialize.params, capabilities: { elicitation: {} } } }))
  t.match(await raw.next(), { id: 1, result: {} })
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask' } }))
  t.match(await raw.next(), { method: 'elicitation/create' })
  const started = Date.now()
  raw.child.stdin.end()
  t.match(await raw.next(), { id: 2, result: { isError: true, content: [{ text: /can no longer answer/ }] } })
  t.ok(Date.now() - started < 2000, 'well before read_timeout')
  t.equal(await raw.exited, 0)
})

t.test('an unknown --route is a usage error', async (t) => {
  const raw = spawnRaw(t, ['--route', '/missing'])
  t.equal(await raw.exited, 1)
  t.match(raw.stderr(), /no route \/missing \(routes: \/live, \/other\)/)
})

t.test('SIGTERM cancels what is in flight and exits 0', async (t) => {
  const raw = spawnRaw(t)
  raw.send(JSON.stringify(initialize))
  t.match(await raw.next(), { id: 1 })
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { steps: 100 }, _meta: { progressToken: 'p' } } }))
  t.match(await raw.next(), { method: 'notifications/progress' })
  raw.child.kill('SIGTERM')
  t.equal(await raw.exited, 0)
  t.match(raw.stderr(), /"outcome":"cancelled"/)
})

t.test('the stateless 2026-07-28 wire over stdio: discover, input-required rounds, cancellation', async (t) => {
  const raw = spawnRaw(t)
  const meta = (capabilities = {}) => ({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities })
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta() } }))
  const discover = await raw.next()
  t.match(discover, { id: 1, result: { resultType: 'complete', supportedVersions: ['2026-07-28'] } })

  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { _meta: meta({ elicitation: {} }), name: 'ask' } }))
  const asked = await raw.next()
  t.equal(asked.result.resultType, 'input_required')
  const key = Object.keys(asked.result.inputRequests)[0]!
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { _meta: meta({ elicitation: {} }), name: 'ask', inputResponses: { [key]: { action: 'accept', content: { name: 'Kai' } } }, requestState: asked.result.requestState } }))
  t.match(await raw.next(), { id: 3, result: { resultType: 'complete', content: [{ text: 'Hello, Kai' }] } })

  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping', params: { _meta: meta() } }))
  t.match(await raw.next(), { id: 4, error: { code: -32601 } }, 'removed methods are -32601')

  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { _meta: meta(), name: 'slow', arguments: { steps: 40 } } }))
  await new Promise((resolve) => setTimeout(resolve, 100))
  raw.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } }))
  raw.send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: meta() } }))
  const next = await raw.next()
  t.equal(next.id, 6, 'the cancelled request sends nothing; the next answer is the list')
  t.equal(next.result.resultType, 'complete')
})
