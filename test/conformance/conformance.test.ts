/**
 * Runs the official conformance suite (2025-11-25 requirements) against a real gateway serving
 * config/conformance.yaml. Every scored scenario must pass, except those listed in
 * expected-failures-2025-11-25.txt, and each of those must really fail, so the list only shrinks.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { runConformance } from './run-suite.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const REVISION = '2025-11-25'

t.setTimeout(300_000)

/** Scenario names, one a line; `#` starts a comment. */
function expectedFailures(revision: string): Set<string> {
  const text = readFileSync(fileURLToPath(new URL(`expected-failures-${revision}.txt`, import.meta.url)), 'utf8')
  return new Set(text.split('\n').map((line) => line.replace(/#.*/, '').trim()).filter(Boolean))
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (typeof address !== 'object' || address === null) throw new Error('no port assigned')
  return address.port
}

/** Resolves once `/healthz` answers 200; rejects if the gateway exits first or `timeoutMs` passes. */
async function healthy(child: ChildProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the gateway exited (${child.exitCode ?? child.signalCode}) before it was healthy`)
    }
    const status = await fetch(url, { signal: AbortSignal.timeout(1000) }).then((r) => r.status, () => 0)
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`)
}

t.test(`conformance ${REVISION}`, { timeout: 300_000 }, async (t) => {
  const port = await freePort()
  const child = spawn(process.execPath, ['gateway/bin.mjs', 'start', '--config', 'config/conformance.yaml'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-20_000) }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  })

  try {
    await healthy(child, `http://127.0.0.1:${port}/healthz`, 20_000)
  } catch (err) {
    t.fail((err as Error).message, { output })
    return
  }

  const outDir = await mkdtemp(join(tmpdir(), `mcp-edge-conformance-${REVISION}-`))
  const { scenarios } = await runConformance({ url: `http://127.0.0.1:${port}/mcp`, requirements: REVISION, outDir })
  const expected = expectedFailures(REVISION)

  for (const s of scenarios) {
    const tag = s.scored ? (s.pass ? 'PASS' : 'FAIL') : s.pass ? 'UNSCORED-PASS' : 'UNSCORED-FAIL'
    t.comment(`${tag} ${s.name}${s.firstFailure ? ` (${s.firstFailure})` : ''}`)
  }
  for (const s of scenarios.filter((s) => s.scored)) {
    if (expected.has(s.name)) t.notOk(s.pass, `${s.name} fails as expected (remove it from the list once it passes)`)
    else t.ok(s.pass, `${s.name} passes`, { firstFailure: s.firstFailure })
  }
  const scoredNames = new Set(scenarios.filter((s) => s.scored).map((s) => s.name))
  for (const name of expected) t.ok(scoredNames.has(name), `expected failure ${name} is a scored scenario`)

  if (child.exitCode !== null || child.signalCode !== null) t.fail('the gateway exited during the run', { output })
  if (t.passing()) await rm(outDir, { recursive: true, force: true })
  else t.comment(`results kept in ${outDir}`)
})
