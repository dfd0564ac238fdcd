/**
 * `mcp-edge start` and the requestState key (issue 26): with several workers the primary used to make
 * a key silently (the warning came only with `workers: 1`), so hosts sharing a Redis store signed
 * with different keys. Now a Redis store without a key is refused before anything starts, whatever
 * `workers` says, and several workers without one are warned about, once, by the primary.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { startGatewayProcess, liveRoute } from '../cluster/gateway-process.ts'
import { reapOnExit } from '../store/reaper.ts'
import { freePort } from '../fixtures/waiting.ts'
import { startRedis } from '../store/redis-server.ts'

t.setTimeout(180_000)
const BIN = fileURLToPath(new URL('../../gateway/bin.mjs', import.meta.url))
const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-state-key-'))
t.teardown(() => rmSync(folder, { recursive: true, force: true }))
const redis = await startRedis(t)
// The cases below are about a start without a key: none from this process's environment either.
delete process.env.MCP_EDGE_REQUEST_STATE_KEY
const env = { ...process.env }

/** Runs `mcp-edge start` on `config`; resolves with its exit code and output once it exits (or is stopped after `ms`). */
async function start(name: string, config: object, ms = 20_000): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const file = path.join(folder, `${name}.yaml`)
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port: await freePort() }, log: { level: 'info' }, ...config }))
  const child = spawn(process.execPath, [BIN, 'start', '--config', file], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  reapOnExit(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const timer = setTimeout(() => child.kill('SIGKILL'), ms)
  const [code] = await once(child, 'exit') as [number | null]
  clearTimeout(timer)
  return { code, stderr, stdout }
}

const redisStore = { type: 'redis', url: redis.url, key_prefix: `state-key-${process.pid}:` }

for (const workers of [1, 2]) {
  t.test(`a Redis store without a key is refused, workers: ${workers}`, async (t) => {
    const result = await start(`redis-${workers}`, { workers, store: redisStore, routes: [liveRoute] })
    t.equal(result.code, 2, 'exits with the invalid-config code, without serving')
    t.match(result.stderr, /cannot start: store type redis is shared across hosts, and request_state\.key is not set \(nor MCP_EDGE_REQUEST_STATE_KEY\)/)
    t.notMatch(result.stdout, /mcp-edge listening/, 'nothing listened')
  })
}

t.test('a Redis store with a key from the environment starts', async (t) => {
  const file = path.join(folder, 'keyed.yaml')
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port: await freePort() }, log: { level: 'info' }, workers: 2, store: redisStore, routes: [liveRoute] }))
  const child = spawn(process.execPath, [BIN, 'start', '--config', file], { env: { ...env, MCP_EDGE_REQUEST_STATE_KEY: 'a-key-every-host-shares-0123' }, stdio: ['ignore', 'pipe', 'pipe'] })
  reapOnExit(child)
  let stdout = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  const deadline = Date.now() + 60_000
  while ((stdout.match(/mcp-edge listening/g) ?? []).length < 2 && child.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal((stdout.match(/mcp-edge listening/g) ?? []).length, 2, 'both workers listen')
  t.notMatch(stdout, /request_state\.key is not set/, 'and nothing is warned')
  child.kill('SIGTERM')
  await once(child, 'exit')
})

t.test('two workers on the cluster store without a key: the primary warns, once', async (t) => {
  const gateway = await startGatewayProcess(t, { workers: 2, store: { type: 'cluster' }, routes: [liveRoute] }, 2)
  await gateway.logged((line) => line.msg === 'mcp-edge listening')
  const warnings = gateway.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('request_state.key is not set'))
  t.equal(warnings.length, 1, 'one warning for the start, not one per worker, and not none')
  t.equal(warnings[0]?.level, 40)
  t.match(warnings[0]?.msg, /the primary made a random key for its workers/)
})

t.test('one process on the memory store: nothing to warn about', async (t) => {
  const gateway = await startGatewayProcess(t, { routes: [liveRoute] }, 1)
  await gateway.logged((line) => line.msg === 'mcp-edge listening')
  t.notOk(gateway.logs.some((line) => typeof line.msg === 'string' && line.msg.includes('request_state.key')), 'no warning')
})
