/**
 * Runs the official conformance suite against one real gateway serving config/conformance.yaml, for
 * both requirement sets on the same URL: 2025-11-25 (sessions) and 2026-07-28 (stateless). Every
 * scored scenario must pass, and so must the unscored ones this gateway is known to pass
 * (REQUIRED_UNSCORED); the other unscored ones are reported as comments.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { loadConfig } from '../../gateway/config/load.ts'
import { runConformance } from './run-suite.ts'
import { freePort } from '../fixtures/waiting.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CONFIG = 'config/conformance.yaml'
/**
 * Unscored scenarios held to the same bar as the scored ones, per revision: the tasks-* scenarios
 * belong to an extension the fixture declares (io.modelcontextprotocol/tasks). json-schema-2020-12 is
 * pending in the suite; it stays a comment only.
 */
const REQUIRED_UNSCORED = {
  '2025-11-25': ['server-session-lifecycle', 'server-sse-polling'],
  '2026-07-28': [
    'http-header-validation', 'http-custom-header-server-validation',
    'tasks-lifecycle', 'tasks-capability-negotiation', 'tasks-wire-fields', 'tasks-request-state-removal', 'tasks-mrtr-input',
    'tasks-request-headers', 'tasks-dispatch-and-envelope', 'tasks-status-notifications', 'tasks-required-task-error', 'tasks-mrtr-composition',
  ],
} as const
type Revision = keyof typeof REQUIRED_UNSCORED

t.setTimeout(600_000)

// Read here as well as by the gateway: the MCP path comes from the config, and this process then
// covers gateway code of its own, so tap never finds the run empty of coverage when the child's
// coverage is lost (a gateway that had to be SIGKILLed writes none).
const { routes } = await loadConfig(join(ROOT, CONFIG))
const LOCATION = routes[0]!.location


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

t.test('conformance, both protocol eras on one URL', { timeout: 600_000 }, async (t) => {
  const port = await freePort()
  const child = spawn(process.execPath, ['gateway/bin.mjs', 'start', '--config', CONFIG], {
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
    await healthy(child, `http://127.0.0.1:${port}/healthz`, 60_000)
  } catch (err) {
    t.fail((err as Error).message, { output })
    return
  }

  for (const revision of Object.keys(REQUIRED_UNSCORED) as Revision[]) {
    await t.test(`conformance ${revision}`, async (t) => {
      const outDir = await mkdtemp(join(tmpdir(), `mcp-edge-conformance-${revision}-`))
      const { scenarios } = await runConformance({ url: `http://127.0.0.1:${port}${LOCATION}`, requirements: revision, outDir })
      for (const s of scenarios) {
        const tag = s.scored ? (s.pass ? 'PASS' : 'FAIL') : s.pass ? 'UNSCORED-PASS' : 'UNSCORED-FAIL'
        t.comment(`${tag} ${s.name}${s.firstFailure ? ` (${s.firstFailure})` : ''}`)
      }
      const scored = scenarios.filter((s) => s.scored)
      t.ok(scored.length > 0, 'the suite lists scored scenarios')
      for (const s of scored) t.ok(s.pass, `${s.name} passes`, { firstFailure: s.firstFailure })
      for (const name of REQUIRED_UNSCORED[revision]) {
        const s = scenarios.find((s) => s.name === name)
        t.ok(s !== undefined && !s.scored, `${name} is an unscored scenario of the suite`)
        t.ok(s?.pass, `${name} passes (unscored)`, { firstFailure: s?.firstFailure })
      }
      const passedScored = scored.filter((s) => s.pass).length
      t.comment(`conformance ${revision}: ${passedScored} passed, ${scored.length - passedScored} failed (scored)`)
      if (t.passing()) await rm(outDir, { recursive: true, force: true })
      else t.comment(`results kept in ${outDir}`)
    })
  }

  if (child.exitCode !== null || child.signalCode !== null) t.fail('the gateway exited during the run', { output })
})
