/**
 * Runs the official MCP conformance suite (server mode) against a URL and judges each scenario from
 * the `checks.json` files it writes.
 *
 *   node --import node20/register.mjs conformance/dist/index.js server --url URL --requirements REV -o OUT
 *                                                                              ──► OUT/conformance.log
 *                                                                              └─► OUT/server-<scenario>-<time>/checks.json
 *   requirements/<REV>.yaml: `server` (scored) + `not_scored` (leg: server) ──► one verdict per scenario
 *
 * A scenario passes when its checks.json exists and no check has status FAILURE (warnings pass).
 */
import { spawn } from 'node:child_process'
import { createWriteStream, existsSync } from 'node:fs'
import { mkdir, readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { load } from 'js-yaml'

export type Requirements = '2025-11-25' | '2026-07-28'

export interface ScenarioVerdict {
  name: string
  /** False for the revision's `not_scored` scenarios (pending, extensions, added after release). */
  scored: boolean
  pass: boolean
  /** `<check id>: <message>` of the first failing check, or why there is no verdict. */
  firstFailure?: string
}

export interface SuiteResult {
  scenarios: ScenarioVerdict[]
  /** The runner's exit code (it is non-zero whenever a scenario fails); null when it was killed. */
  runnerExit: number | null
  outDir: string
}

export interface SuiteOptions {
  url: string
  requirements: Requirements
  /** Results go here (created if missing); the runner's output is kept in `conformance.log`. */
  outDir: string
  /** Per-scenario limit passed to the runner, ms. */
  scenarioTimeoutMs?: number
  /** Limit for the whole run, ms; the runner is killed after it. */
  runTimeoutMs?: number
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PKG = join(ROOT, 'node_modules/@modelcontextprotocol/conformance')
// The published CLI imports fs.globSync, which only Node >= 22 has: on Node 20 this preload supplies it.
const NODE20_SUPPORT = fileURLToPath(new URL('./node20/register.mjs', import.meta.url))
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/

interface Check { id?: string; name?: string; description?: string; status?: string; errorMessage?: string }

/** Runs the suite for one requirement set and returns a verdict for every scenario it lists or ran. */
export async function runConformance(options: SuiteOptions): Promise<SuiteResult> {
  const { requirements, outDir } = options
  await mkdir(outDir, { recursive: true })
  const runnerExit = await runRunner(options)
  const log = await readFile(join(outDir, 'conformance.log'), 'utf8').catch(() => '')
  const { scored, unscored } = await scenarioLists(requirements)
  // Anything the runner announced that the requirement file does not list is counted, as a surprise should be.
  for (const [, name] of log.matchAll(/=== Running scenario: (\S+) ===/g)) {
    if (name && !scored.includes(name) && !unscored.includes(name)) scored.push(name)
  }
  const dirs = await resultDirs(outDir)
  const scenarios: ScenarioVerdict[] = []
  for (const [names, isScored] of [[scored, true], [unscored, false]] as const) {
    for (const name of names) scenarios.push({ name, scored: isScored, ...(await verdict(name, dirs, log, runnerExit)) })
  }
  return { scenarios, runnerExit, outDir }
}

function runRunner({ url, requirements, outDir, scenarioTimeoutMs = 30_000, runTimeoutMs = 600_000 }: SuiteOptions) {
  const args = ['--import', NODE20_SUPPORT, join(PKG, 'dist/index.js'), 'server', '--url', url, '--requirements', requirements]
  args.push('--timeout', String(scenarioTimeoutMs), '-o', outDir)
  const log = createWriteStream(join(outDir, 'conformance.log'))
  return new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.pipe(log, { end: false })
    child.stderr.pipe(log, { end: false })
    const timer = setTimeout(() => child.kill('SIGKILL'), runTimeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      log.end()
      reject(err)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      log.end(() => resolve(code))
    })
  })
}

async function scenarioLists(requirements: Requirements) {
  const file = join(PKG, 'requirements', `${requirements}.yaml`)
  const doc = load(await readFile(file, 'utf8')) as {
    server?: string[]
    not_scored?: { scenario: string; leg: string }[]
  }
  const scored = [...(doc.server ?? [])]
  const unscored = (doc.not_scored ?? []).filter((e) => e.leg === 'server').map((e) => e.scenario)
  return { scored, unscored }
}

/** scenario name → its results folder (the latest one if it ran twice). */
async function resultDirs(outDir: string) {
  const dirs = new Map<string, string>()
  for (const entry of (await readdir(outDir)).sort()) {
    const name = RESULT_DIR.exec(entry)?.[1]
    if (name) dirs.set(name, join(outDir, entry))
  }
  return dirs
}

const oneLine = (s: unknown, max = 220) => {
  const flat = String(s ?? '').replace(/\x1b\[[0-9;]*m/g, '').replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

async function verdict(name: string, dirs: Map<string, string>, log: string, runnerExit: number | null) {
  const dir = dirs.get(name)
  if (!dir) {
    return { pass: false, firstFailure: runnerExit === null ? 'not run: the run hit its time limit first' : 'not run: the runner never reached it' }
  }
  const file = join(dir, 'checks.json')
  if (!existsSync(file)) {
    if (runnerExit === null) return { pass: false, firstFailure: 'interrupted: the run hit its time limit during it' }
    const crash = log.split('\n').find((line) => line.includes(`Failed to run scenario ${name}:`))
    return { pass: false, firstFailure: `crashed: ${oneLine(crash ?? 'no checks.json written')}` }
  }
  let checks: unknown
  try {
    checks = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    return { pass: false, firstFailure: `unreadable checks.json: ${oneLine((err as Error).message)}` }
  }
  if (!Array.isArray(checks)) return { pass: false, firstFailure: 'unreadable checks.json: not an array' }
  const failures = (checks as Check[]).filter((c) => c?.status === 'FAILURE')
  const first = failures[0]
  if (!first) return { pass: true }
  const more = failures.length > 1 ? ` [+${failures.length - 1} more]` : ''
  return { pass: false, firstFailure: `${first.id}: ${oneLine(first.errorMessage || first.description || first.name)}${more}` }
}
