// Reload as an operator does it, on real gateway processes: `mcp-edge reload` (SIGHUP underneath)
// with a broken handler changes nothing and says why (file and line); a good change brings the new
// tool; calls made without pause through three reloads all succeed, in the same session, for one
// process on the memory store (the default config's shape), two workers on the cluster store and two
// workers on Redis; `start --watch` serves a handler module dropped into the folder and named in the
// config, without a restart.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { reapOnExit } from '../store/reaper.ts'
import { freePort, onFreePort } from '../fixtures/waiting.ts'
import { startRedis } from '../store/redis-server.ts'

t.setTimeout(600_000)
const BIN = fileURLToPath(new URL('../../gateway/bin.mjs', import.meta.url))
const INDEX = fileURLToPath(new URL('../../gateway/index.ts', import.meta.url))

/** A project folder of its own: package.json, handlers/tools.ts (+ words.ts it imports), config/gateway.yaml. */
function project(t: Test, port: number, extra: object): { dir: string; config: string; writeTools(names: string[], word?: string): void; writeConfig(routes?: object[]): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-edge-reload-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}')
  const config = path.join(dir, 'gateway.yaml')
  const route = { location: '/mcp', handler: './tools.ts', server: { name: 'reload', version: '1.0.0' } }
  return {
    dir,
    config,
    writeTools(names, word = 'one') {
      writeFileSync(path.join(dir, 'words.ts'), `export const word = ${JSON.stringify(word)}\n`)
      writeFileSync(path.join(dir, 'tools.ts'), [
        `import { defineHandler } from ${JSON.stringify(INDEX)}`,
        "import { word } from './words.ts'",
        'export default defineHandler((mcp, server) => {',
        ...names.map((name) => `  server.register(mcp.tool(${JSON.stringify(name)}, () => \`${name} says \${word}\`, { description: 'a tool' }))`),
        '})',
        '',
      ].join('\n'))
    },
    writeConfig(routes = [route]) {
      writeFileSync(config, JSON.stringify({ listen: { host: '127.0.0.1', port }, log: { level: 'info' }, drain_timeout: 5, ...extra, routes }))
    },
  }
}

async function startGateway(t: Test, config: string, args: string[] = []): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [BIN, 'start', '--config', config, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  reapOnExit(child)
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGKILL')
    await once(child, 'exit')
  })
  return { child, output: () => output }
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000, gateway?: { child: ChildProcess; output: () => string }): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe().catch(() => false))) {
    // A gateway that exited will not come: say so at once, with what it wrote.
    if (gateway !== undefined && gateway.child.exitCode !== null) throw new Error(`the gateway exited (code ${gateway.child.exitCode}) before ${what}: ${gateway.output()}`)
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${gateway === undefined ? '' : `; the gateway wrote: ${gateway.output()}`}`)
    await sleep(100)
  }
}

function reload(config: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'reload', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    child.on('close', (code) => resolve({ code, out }))
  })
}

const text = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]!.text

async function connect(t: Test, url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'reload-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url))
  await client.connect(transport)
  t.teardown(() => client.close())
  return { client, transport }
}

/** The same story for every store shape. */
async function reloadStory(t: Test, extra: object, workers: number): Promise<void> {
  // On another port when the free one was taken before the gateway bound it (a test beside this one).
  const { port, files } = await onFreePort(async (port) => {
    const files = project(t, port, extra)
    files.writeTools(['alpha'])
    files.writeConfig()
    const gateway = await startGateway(t, files.config)
    // Every worker listening (each says so), so that every one of them reloads below.
    await until('every worker to listen', async () => (gateway.output().match(/"msg":"mcp-edge listening"/g) ?? []).length >= workers, 30_000, gateway)
    return { port, files }
  })
  const url = `http://127.0.0.1:${port}/mcp`
  await until('the gateway to answer', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok)
  const { client, transport } = await connect(t, url)
  const sessionId = transport.sessionId
  t.equal(text(await client.callTool({ name: 'alpha' })), 'alpha says one')

  // A broken handler: nothing changes, and the reason names the file and line.
  writeFileSync(path.join(files.dir, 'words.ts'), 'export const word = (\n')
  const refused = await reload(files.config)
  t.equal(refused.code, 2, 'mcp-edge reload exits 2 when the reload is refused')
  t.match(refused.out, /words\.ts:\d+:\d+/, 'and names the broken file with its line')
  t.equal(text(await client.callTool({ name: 'alpha' })), 'alpha says one', 'the old handlers keep serving the session')
  t.ok((await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 'and the gateway is alive')

  // Calls one after another, in one session, through three good reloads: each waits 5 ms after the
  // last answer, so the calls go on through every reload without the caller and the gateway taking
  // both cores for the whole file (with no pause, 2,400-3,200 calls here: a third of the file's CPU).
  let calls = 0
  const failures: string[] = []
  let running = true
  const caller = (async () => {
    while (running) {
      try {
        await client.callTool({ name: 'alpha' })
        calls++
        await sleep(5)
      } catch (error) {
        failures.push(`${String(error)} (${String((error as { cause?: unknown }).cause)})`)
      }
    }
  })()
  for (const word of ['two', 'three', 'four']) {
    files.writeTools(['alpha', `beta-${word}`], word)
    const outcome = await reload(files.config)
    t.equal(outcome.code, 0, `reload to "${word}" succeeds: ${outcome.out.trim()}`)
  }
  await sleep(300)
  running = false
  await caller
  t.same(failures, [], `${calls} calls during three reloads, none failed`)
  t.ok(calls > 10, 'calls kept flowing')
  t.equal(transport.sessionId, sessionId, 'the same session throughout')
  const names = (await client.listTools()).tools.map((tool) => tool.name).sort()
  t.same(names, ['alpha', 'beta-four'], 'the last reload’s tools are listed')
  t.equal(text(await client.callTool({ name: 'alpha' })), 'alpha says four', 'an imported module was loaded afresh too')
}

t.test('one process, memory store (the default config’s shape)', (t) => reloadStory(t, {}, 1))
t.test('two workers, cluster store', (t) => reloadStory(t, { workers: 2, store: { type: 'cluster' } }, 2))
t.test('two workers, Redis store', async (t) => {
  const redis = await startRedis(t)
  await reloadStory(t, { workers: 2, store: { type: 'redis', url: redis.url, key_prefix: 'reload:' }, request_state: { key: 'reload-test-shared-request-state-key' } }, 2)
})

t.test('start --watch serves a handler module dropped into the folder and named in the config', async (t) => {
  const port = await freePort()
  const files = project(t, port, {})
  files.writeTools(['alpha'])
  files.writeConfig()
  await startGateway(t, files.config, ['--watch'])
  await until('the gateway to listen', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok)
  await sleep(500) // the watcher is set up after listening
  writeFileSync(path.join(files.dir, 'extra.ts'), `import { defineHandler } from ${JSON.stringify(INDEX)}\nexport default defineHandler((mcp, server) => { server.register(mcp.tool('dropped', () => 'dropped in', { description: 'new' })) })\n`)
  files.writeConfig([
    { location: '/mcp', handler: './tools.ts', server: { name: 'reload', version: '1.0.0' } },
    { location: '/extra', handler: './extra.ts', server: { name: 'extra', version: '1.0.0' } },
  ])
  let served = false
  await until('the new route to be served', async () => {
    const answer = await fetch(`http://127.0.0.1:${port}/extra`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'w', version: '1' } } }) })
    await answer.text()
    served = answer.status === 200
    return served
  }, 60_000)
  const { client } = await connect(t, `http://127.0.0.1:${port}/extra`)
  t.equal(text(await client.callTool({ name: 'dropped' })), 'dropped in', 'the dropped-in module serves at its route, no restart')
})
