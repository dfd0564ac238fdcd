// The stdio transport against real child processes: command, args, env and cwd; newline-delimited
// JSON; the write, read and exit timeouts; a server that exits or writes junk.
import { tmpdir } from 'node:os'
import { realpathSync } from 'node:fs'
import t from 'tap'
import { McpClient, ProtocolError, StdioTransport, TimeoutError, TransportError, type StdioOptions } from '../../gateway/client/index.ts'
import { clientFixture, eventually, text } from './harness.ts'

const script = clientFixture('stdio-script.mjs')
const transportFor = (mode: string, options: Partial<StdioOptions> = {}): StdioTransport =>
  new StdioTransport({ command: process.execPath, args: [script, mode], stderr: 'ignore', ...options })

function exitedNow(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

t.test('spawns the command with args, env and cwd, and speaks newline-delimited JSON', async (t) => {
  const cwd = realpathSync(tmpdir())
  const client = new McpClient(transportFor('normal', { env: { SCRIPT_NAME: 'from-env' }, cwd }))
  t.teardown(() => client.close())
  const result = await client.initialize()
  t.equal(result.serverInfo.name, 'from-env', 'env reached the process')
  t.equal(result.instructions, cwd, 'cwd reached the process')
  t.equal(text(await client.callTool('x')), 'called')
  await client.ping()
})

t.test('the read timeout fails a request the server stays silent on', async (t) => {
  // Generous, because it also covers the server's start-up while initialize awaits its answer.
  const client = new McpClient(transportFor('mute', { readTimeoutMs: 1500 }))
  t.teardown(() => client.close())
  await client.initialize()
  const started = Date.now()
  const silent = await client.callTool('x').catch((error: unknown) => error)
  t.type(silent, TimeoutError)
  t.match(silent, { timeoutMs: 1500, message: /wrote nothing for 1500 ms/ })
  t.ok(Date.now() - started >= 1400)
  await client.ping()
  t.pass('the connection goes on')
})

t.test('the write timeout fails a send the server does not read', async (t) => {
  const transport = transportFor('deaf', { writeTimeoutMs: 150, exitTimeoutMs: 100 })
  t.teardown(() => transport.close())
  await transport.start()
  // Far more than a pipe buffers, so the write cannot complete while nobody reads.
  const big = { jsonrpc: '2.0' as const, method: 'notifications/big', params: { padding: 'x'.repeat(4 * 1024 * 1024) } }
  const stuck = await transport.send(big).catch((error: unknown) => error)
  t.type(stuck, TimeoutError)
  t.match(stuck, { timeoutMs: 150 })
})

t.test('close() ends stdin, then SIGTERM, then SIGKILL, waiting the exit timeout between', async (t) => {
  // A long exit timeout: a close that ends before it was not a signal's doing (however slowly a
  // busy machine starts the child and lets it see its stdin end).
  const polite = transportFor('normal', { exitTimeoutMs: 15_000 })
  await polite.start()
  let started = Date.now()
  await polite.close()
  t.ok(Date.now() - started < 15_000, 'a server that exits when stdin ends is not signalled')
  t.ok(exitedNow(polite.pid!))

  const stubborn = transportFor('stubborn', { exitTimeoutMs: 100 })
  let closed = 0
  const client = new McpClient(stubborn)
  await client.initialize({ on: { close: () => closed++ } }) // answered once its SIGTERM handler is in place
  started = Date.now()
  await client.close()
  const waited = Date.now() - started
  t.ok(waited >= 190, `waited the exit timeout twice before SIGKILL (${waited} ms)`)
  t.ok(exitedNow(stubborn.pid!), 'the process is gone')
  t.equal(closed, 1)
})

t.test('a server that exits fails what is pending; junk on stdout is reported, not fatal', async (t) => {
  const errors: Error[] = []
  const client = new McpClient(transportFor('crash'))
  t.teardown(() => client.close())
  await client.initialize({ on: { error: (error) => errors.push(error) } })
  const lost = await client.callTool('x').catch((error: unknown) => error)
  t.type(lost, TransportError)
  await eventually(() => errors.length === 1)
  t.match(errors[0], { message: 'The server process exited with code 3' })
  await t.rejects(client.ping(), TransportError)

  const noisy: Error[] = []
  const other = new McpClient(transportFor('noisy'))
  t.teardown(() => other.close())
  await other.initialize({ on: { error: (error) => noisy.push(error) } })
  t.type(noisy[0], ProtocolError)
  await other.ping()
})

t.test('a command that does not exist is a TransportError from initialize', async (t) => {
  const missing = await new McpClient(new StdioTransport({ command: '/nonexistent/mcp-server' })).initialize().catch((error: unknown) => error)
  t.type(missing, TransportError)
  t.match(missing, { message: /ENOENT/ })
})
