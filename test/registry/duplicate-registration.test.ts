/**
 * A duplicate registration fails the route's setup, naming the component and the handler file: when
 * the gateway starts (in this process) and in `mcp-edge check` (a child process, as a user runs it).
 * At run time the same register throws, and the tool that tried reports it as an isError result.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { connect, fixture, gatewayWith } from '../e2e/harness.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const DUPLICATE = join(ROOT, 'test/fixtures/broken-handlers/duplicate-tool.ts')
const NAMED = /route \/dup: .*duplicate-tool\.ts: handler setup failed: duplicate tool "lookup": already registered on this route \(use replaceTools, or unregisterTool first\)/

t.test('start refuses the route, naming the route, the file and the tool', async (t) => {
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    routes: [{ location: '/dup', handler: DUPLICATE, server: { name: 'dup', version: '1' } }],
  }, '<test>')
  await t.rejects(startGateway(config), { code: 'MCP_EDGE_HANDLER_INVALID', message: NAMED })
})

t.test('mcp-edge check reports it and exits 2', async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-dup-'))
  t.teardown(() => rm(tmp, { recursive: true, force: true }))
  const file = join(tmp, 'gateway.yaml')
  await writeFile(file, `routes:\n  - location: /dup\n    handler: ${JSON.stringify(DUPLICATE)}\n    server: { name: dup, version: 1.0.0 }\n`)
  const child = spawn(process.execPath, [join(ROOT, 'gateway/bin.mjs'), 'check', '--config', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const [code] = (await once(child, 'close')) as [number | null]
  clearTimeout(timer)
  t.equal(code, 2, 'exit 2', { stderr })
  t.equal(stdout, '', 'no "ok"')
  t.match(stderr, NAMED)
})

t.test('at run time a duplicate register throws: the tool that tried answers isError, the first stays', async (t) => {
  const gateway = await gatewayWith(t, [{ location: '/catalog', handler: fixture('catalog'), server: { name: 'catalog', version: '1' } }])
  const client = await connect(t, `${gateway.url}/catalog`)
  t.match(await client.callTool({ name: 'grow' }), { content: [{ type: 'text', text: 'registered grown' }] })
  const again = await client.callTool({ name: 'grow' })
  t.equal(again.isError, true)
  t.match(again.content, [{ type: 'text', text: /duplicate tool "grown"/ }], 'the handler sees which tool')
  t.match(await client.callTool({ name: 'grown' }), { content: [{ type: 'text', text: 'I was added at run time' }] })
})
