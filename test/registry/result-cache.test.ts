/**
 * Cached results of a handler's read-only tool (`cache: {ttl_s}`), driven by the official SDK client
 * with two API keys: kept per principal (bob never gets alice's result), per canonical arguments,
 * never an error; the log phase's event says `cached`; the per-principal entry bound and the
 * per-route byte bound reached. `mcp-edge check` refuses `cache:` on a tool that is not read-only.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t, { type Test } from 'tap'
import { configFromObject } from '../../gateway/config/load.ts'
import { startGateway } from '../../gateway/server/server.ts'
import { canonicalJson as canonical } from '../../gateway/wire/canonical-json.ts'
import { eventually } from '../fixtures/waiting.ts'

const BIN = fileURLToPath(new URL('../../gateway/bin.mjs', import.meta.url))
const CACHED = fileURLToPath(new URL('./fixtures/cached-tools.ts', import.meta.url))
const NOT_READ_ONLY = fileURLToPath(new URL('./fixtures/cached-not-read-only.ts', import.meta.url))
const LOG = fileURLToPath(new URL('../fixtures/phases/log.ts', import.meta.url))
const KEYS = { alice: 'k-alice-0123456789abcdef', bob: 'k-bob-0123456789abcdef' }
const calls = ((globalThis as { cachedToolCalls?: string[] }).cachedToolCalls ??= [])
const logged = ((globalThis as { phaseLogSeen?: Array<Record<string, unknown>> }).phaseLogSeen ??= [])
const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text)

const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-result-cache-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const keysFile = path.join(folder, 'keys.yaml')
writeFileSync(keysFile, `keys:\n${Object.entries(KEYS).map(([principal, key]) => `  - sha256: ${createHash('sha256').update(key).digest('hex')}\n    principal: ${principal}\n    scopes: []\n`).join('')}`)

t.test('canonical arguments: key order does not matter, values do', async (t) => {
  t.equal(canonical({ q: 'a', page: 1, deep: { y: [1, { b: 2, a: 1 }], x: null } }), canonical({ deep: { x: null, y: [1, { a: 1, b: 2 }] }, page: 1, q: 'a' }))
  t.not(canonical({ q: 'a' }), canonical({ q: 'b' }))
  t.not(canonical({ q: '1' }), canonical({ q: 1 }))
})

t.test('mcp-edge check refuses cache: on a tool that is not read-only', async (t) => {
  const file = path.join(folder, 'not-read-only.yaml')
  writeFileSync(file, JSON.stringify({ routes: [{ location: '/mcp', handler: NOT_READ_ONLY, server: { name: 'x', version: '1' } }] }))
  const child = spawn(process.execPath, [BIN, 'check', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const [code] = (await once(child, 'close')) as [number | null]
  t.equal(code, 2, 'exit 2')
  t.match(output, /delete_everything.*cache needs annotations\.readOnlyHint: true/s, 'the problem names the tool and why')
})

t.test('a handler tool\'s results, per principal, through the official SDK client', async (t) => {
  const config = configFromObject({
    listen: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    limits: { cache_entries_per_principal: 3, cache_bytes_per_route: 4096 },
    routes: [{ location: '/tools', handler: CACHED, server: { name: 'cached', version: '1.0.0' }, auth: { api_keys: keysFile }, phases: { log: LOG } }],
  }, '<test>')
  const gateway = await startGateway(config)
  t.teardown(() => gateway.close())
  const client = async (t: Test, key: string): Promise<Client> => {
    const sdk = new Client({ name: 'result-cache', version: '1.0.0' })
    await sdk.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/tools`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
    t.teardown(() => sdk.close())
    return sdk
  }
  const alice = await client(t, KEYS.alice)
  const bob = await client(t, KEYS.bob)
  const lookup = async (sdk: Client, args: Record<string, unknown>) => sdk.callTool({ name: 'lookup', arguments: args })

  const first = text(await lookup(alice, { q: 'a', page: 1 }))
  t.equal(first, 'a for alice #1')
  t.equal(text(await lookup(alice, { page: 1, q: 'a' })), first, 'the same arguments in another order: the kept result')
  t.same(calls, ['a'], 'the tool ran once')
  t.equal(text(await lookup(bob, { q: 'a', page: 1 })), 'a for bob #2', 'bob\'s call runs the tool: alice\'s result is hers')
  t.same(calls, ['a', 'a'])
  await eventually(() => logged.filter((event) => event.component === 'lookup').length === 3)
  t.same(logged.filter((event) => event.component === 'lookup').map((event) => event.cached === true), [false, true, false], 'the log phase says which answer was cached')

  for (let round = 0; round < 2; round++) t.equal((await lookup(alice, { q: 'fail' })).isError, true)
  t.same(calls.slice(2), ['fail', 'fail'], 'an isError result is never kept')

  await t.test('entries per principal: alice\'s oldest goes once she holds more than the bound', async (t) => {
    calls.length = 0
    for (const q of ['b', 'c', 'd']) await lookup(alice, { q })
    t.same(calls, ['b', 'c', 'd'])
    await lookup(alice, { q: 'a', page: 1 })
    t.same(calls, ['b', 'c', 'd', 'a'], 'her first entry was dropped for the newer ones')
    await lookup(bob, { q: 'a', page: 1 })
    t.same(calls, ['b', 'c', 'd', 'a'], 'bob\'s own entry is still there')
  })

  await t.test('bytes per route: a result over the route\'s bound is not kept', async (t) => {
    calls.length = 0
    const big = 'x'.repeat(5000)
    await lookup(alice, { q: big })
    await lookup(alice, { q: big })
    t.equal(calls.length, 2, 'asked twice: over 4096 bytes, never kept')
    const usage = await gateway.store.cache.usage('/tools')
    t.ok(usage.route <= 4096, `the route holds ${usage.route} bytes`)
  })
})
