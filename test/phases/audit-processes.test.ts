/**
 * The audit record from real `mcp-edge` processes: a route served over stdio (`mcp-edge stdio`) emits
 * the call events HTTP and WebSocket do, so its calls, refusals and elicitation rounds are lines; and
 * `audit: {fd: 1}`: a gateway (two workers) whose stdout is the audit stream, every line of it parsed.
 * The stdio route is driven by the official SDK client; the two workers by stateless calls, each on
 * its own connection.
 */
import { spawn } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { once } from 'node:events'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import t from 'tap'
import { reapOnExit } from '../store/reaper.ts'
import { eventually, freePort } from '../fixtures/waiting.ts'

t.setTimeout(120_000)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BIN = join(ROOT, 'gateway/bin.mjs')
const HANDLER = join(ROOT, 'test/fixtures/phases/audit-handler.ts')
const ROUTE = { location: '/tools', server: { name: 'tools', version: '1.0.0' }, handler: HANDLER, rewrite: { tools: { drop_table: { hidden: true } } }, filter: { redact: true } }

const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-audit-processes-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))

type Line = Record<string, unknown>
const parsed = (text: string): Line[] => text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Line)

t.test('a route served over stdio: its calls, a refusal and an elicitation round are audit lines, written before the process exits', async (t) => {
  const file = join(tmp, 'stdio.jsonl')
  const config = join(tmp, 'stdio.json')
  await writeFile(config, JSON.stringify({ log: { level: 'warn' }, audit: { file }, routes: [ROUTE] }))
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'stdio', '--config', config, '--route', '/tools'], cwd: ROOT, stderr: 'pipe' })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const client = new Client({ name: 'stdio-audit', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } })
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }))
  await client.connect(transport)
  await client.callTool({ name: 'say', arguments: { text: 'words over stdio' } })
  await client.callTool({ name: 'leak', arguments: {} })
  await t.rejects(client.callTool({ name: 'drop_table', arguments: {} }), /Unknown tool: drop_table/)
  await client.callTool({ name: 'ask', arguments: {} })
  await client.getPrompt({ name: 'greet' })
  await client.close()
  // The client closed stdin: the process writes its last lines and exits.
  await eventually(async () => (await readFile(file, 'utf8').catch(() => '')).split('\n').length > 6, 15_000).catch(() => {
    throw new Error(`no audit lines from the stdio process:\n${stderr}`)
  })
  const lines = parsed(await readFile(file, 'utf8'))
  t.same(lines.map((line) => [line.method, line.component, line.outcome, line.decision, line.message]), [
    ['tools/call', 'say', 'ok', null, null],
    ['tools/call', 'leak', 'ok', 'filter', null],
    ['tools/call', 'drop_table', 'error', 'rewrite', 'Unknown tool: drop_table'],
    ['elicitation/create', 'ask', 'ok', null, 'decline'],
    ['tools/call', 'ask', 'ok', null, null],
    ['prompts/get', 'greet', 'ok', null, null],
  ], 'one line per call and per round, in order, with the rule that decided')
  t.ok(lines.every((line) => line.route === '/tools' && typeof line.session === 'string' && line.generation === 0), 'the route and the session\'s hash on each')
  t.notMatch(await readFile(file, 'utf8'), /words over stdio|AKIA/, 'no argument value, no result')
})

t.test('mcp-edge stdio refuses audit.fd 1: stdout carries its JSON-RPC', async (t) => {
  const config = join(tmp, 'stdio-fd1.json')
  await writeFile(config, JSON.stringify({ log: { level: 'warn' }, audit: { fd: 1 }, routes: [ROUTE] }))
  const child = spawn(process.execPath, [BIN, 'stdio', '--config', config, '--route', '/tools'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] })
  reapOnExit(child)
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const [code] = await once(child, 'exit')
  t.not(code, 0, 'it does not start')
  t.match(output, /audit\.fd 1 is stdout/, 'and says why')
})

t.test('audit: {fd: 1}: a gateway of two workers whose stdout is the audit stream, every line parsed, none lost on a clean stop', async (t) => {
  const port = await freePort()
  const config = join(tmp, 'fd1.json')
  // The logs go to stdout too (pino's lines, with `level`): both write whole lines, never cut by the other.
  await writeFile(config, JSON.stringify({ listen: { host: '127.0.0.1', port }, workers: 2, log: { level: 'info' }, drain_timeout: 2, audit: { fd: 1 }, routes: [ROUTE] }))
  const child = spawn(process.execPath, [BIN, 'start', '--config', config], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  reapOnExit(child)
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGKILL')
    await once(child, 'exit')
  })
  // Both workers listening (each says so on stdout), so the primary deals the calls to both.
  await eventually(() => stdout.split('"msg":"mcp-edge listening"').length - 1 >= 2, 60_000).catch(() => {
    throw new Error(`the gateway did not start:\n${stdout}\n${stderr}`)
  })
  // Stateless (2026-07-28) calls, each on a fresh connection: the primary deals them to both workers.
  const CALLS = 200
  for (let start = 0; start < CALLS; start += 16) {
    const statuses = await Promise.all(Array.from({ length: Math.min(16, CALLS - start) }, (_, i) => statelessCall(port, start + i)))
    t.ok(statuses.every((status) => status === 200), `calls ${start}… answered`)
  }
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'a clean stop')
  const lines = stdout.split('\n')
  t.equal(lines.pop(), '', 'the stream ends with a whole line')
  const parsedLines = lines.map((line) => JSON.parse(line) as Line)
  t.pass('every line of stdout parses as JSON')
  const records = parsedLines.filter((record) => !('level' in record))
  t.equal(records.length, CALLS, 'one line per call, none lost')
  t.ok(records.every((record) => record.method === 'tools/call' && record.component === 'say' && record.outcome === 'ok' && typeof record.arguments_sha256 === 'string'), 'each an audit line')
  t.equal(new Set(records.map((record) => record.pid)).size, 2, 'both workers wrote to it')
  t.notMatch(stdout, /fd1-value/, 'no argument value')
})

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'audit-fd1', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }

/** One stateless tools/call on a fresh connection; resolves with the status. */
function statelessCall(port: number, n: number): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'say', arguments: { text: `fd1-value-${n}` }, _meta: ENVELOPE } })
  return new Promise((resolve, reject) => {
    const request = httpRequest(`http://127.0.0.1:${port}/tools`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'say', 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode!))
    })
    request.on('error', reject)
    request.end(body)
  })
}
