/**
 * What a reload needs besides the gateway it replaces, the same for one process and for a cluster
 * primary: the new config and handlers checked first in a fresh process (exactly `mcp-edge check`),
 * the control files `mcp-edge reload` finds the running gateway by, and `--watch`.
 *
 *   SIGHUP | mcp-edge reload | a watched file changed
 *        └─► `mcp-edge check --config FILE` in a child ──fails──► log every problem; nothing changes
 *                                                  └─ok──► one process: a new app generation under the same port
 *                                                          cluster: workers replaced one at a time
 *        └─► the outcome written beside the pid file, where `mcp-edge reload` reads it
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync, rmSync, watch, type FSWatcher } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from 'pino'
import type { GatewayConfig } from '../config/types.ts'

/** The `mcp-edge` script this process runs (the CLI, in a checkout and in an installed package alike). */
const BIN = process.argv[1] ?? fileURLToPath(new URL('../bin.mjs', import.meta.url))
/** How long `check` may take in the child (it loads every handler and runs its setup). */
const CHECK_TIMEOUT_MS = 60_000

/** What a reload came to: written for `mcp-edge reload`, logged by the gateway. */
export interface ReloadOutcome {
  ok: boolean
  /** When the reload was asked for (ms since the epoch). */
  requestedAt: number
  /** Every problem `check` found, in full (file and line), when not ok. */
  problems: string[]
  /** The generation (one process) or the workers now serving. */
  detail?: string
}

/** Runs `mcp-edge check` on the config file in a fresh process: its module cache is empty, so it sees the files as they are now. */
export function checkInChild(file: string): Promise<{ ok: boolean; problems: string[] }> {
  return new Promise((resolve) => {
    // --offline: a REST API that is down for a moment does not hold a reload back (its document must still load).
    const child = spawn(process.execPath, [BIN, 'check', '--offline', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), CHECK_TIMEOUT_MS)
    child.on('error', (error) => {
      clearTimeout(timer)
      resolve({ ok: false, problems: [`cannot run mcp-edge check: ${error.message}`] })
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) return resolve({ ok: true, problems: [] })
      const problems = output.split('\n').map((line) => line.trimEnd()).filter((line) => line !== '')
      if (signal !== null) problems.push(`mcp-edge check did not finish within ${CHECK_TIMEOUT_MS / 1000} s`)
      resolve({ ok: false, problems: problems.length > 0 ? problems : [`mcp-edge check exited with ${code}`] })
    })
  })
}

/** Where the running gateway for this config file keeps its pid and last reload outcome (one per config file). */
export function controlFiles(file: string): { pid: string; outcome: string } {
  const key = createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 16)
  const dir = process.env.XDG_RUNTIME_DIR ?? tmpdir()
  return { pid: path.join(dir, `mcp-edge-${key}.pid`), outcome: path.join(dir, `mcp-edge-${key}.reload.json`) }
}

/** Writes the pid file; removed when the process exits. */
export async function writePidFile(file: string): Promise<void> {
  const { pid } = controlFiles(file)
  await writeFile(pid, `${process.pid}\n`)
  process.once('exit', () => {
    try {
      // Only ours: a newer gateway on the same config may have taken it over.
      const text = readFileSync(pid, 'utf8')
      if (text.trim() === String(process.pid)) rmSync(pid, { force: true })
    } catch {
      // gone already
    }
  })
}

export async function writeOutcome(file: string, outcome: ReloadOutcome): Promise<void> {
  await writeFile(controlFiles(file).outcome, JSON.stringify(outcome)).catch(() => undefined)
}

/**
 * `mcp-edge reload`: sends SIGHUP to the gateway serving `file` and waits for its outcome. Resolves
 * with the outcome, or an explanation when there is no gateway or no answer.
 */
export async function requestReload(file: string, timeoutMs = CHECK_TIMEOUT_MS + 30_000): Promise<ReloadOutcome | string> {
  const files = controlFiles(file)
  let pid: number
  try {
    pid = Number((await readFile(files.pid, 'utf8')).trim())
  } catch {
    return `no running gateway for ${path.resolve(file)} (no ${files.pid}); start it with mcp-edge start --config ${file}`
  }
  const requestedAt = Date.now()
  try {
    process.kill(pid, 'SIGHUP')
  } catch (error) {
    await rm(files.pid, { force: true })
    return `the gateway with pid ${pid} is gone (${(error as Error).message})`
  }
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    try {
      const outcome = JSON.parse(await readFile(files.outcome, 'utf8')) as ReloadOutcome
      if (outcome.requestedAt >= requestedAt) return outcome
    } catch {
      // not written yet
    }
  }
  return `the gateway (pid ${pid}) did not report within ${timeoutMs / 1000} s; see its log`
}

/**
 * One reload at a time: a request during one runs once more after it, with the files as they are
 * then. Each outcome is logged by `reload` itself and written where `mcp-edge reload` reads it.
 */
export function serializeReloads(file: string, logger: Logger, reload: () => Promise<ReloadResult>): (why: string) => Promise<ReloadResult> {
  let running: Promise<ReloadResult> | undefined
  let queued: Promise<ReloadResult> | undefined
  const run = (why: string): Promise<ReloadResult> => {
    const requestedAt = Date.now()
    logger.info({ why }, 'reload: checking the new config and handler modules')
    running = reload()
      .catch((error: unknown): ReloadResult => ({ ok: false, problems: [String(error)] }))
      .then(async (outcome) => {
        await writeOutcome(file, { ...outcome, requestedAt })
        running = undefined
        return outcome
      })
    return running!
  }
  // A request while one runs is served by one more reload after it (several such requests share it).
  return (why) => {
    if (running === undefined) return run(why)
    queued ??= running.then(() => {
      queued = undefined
      return run('changed again during the last reload')
    })
    return queued
  }
}

/** What a reload came to (what POST /api/reload reports). */
export interface ReloadResult { ok: boolean; problems: string[]; detail?: string }

/**
 * `mcp-edge start --watch`: calls `onChange` (debounced) when the config file or a file in a folder
 * holding a handler module changes. Returns a function that stops watching.
 */
export function watchForChanges(config: GatewayConfig, onChange: (file: string) => void, logger: Logger): () => void {
  const folders = new Set<string>([path.dirname(config.file)])
  for (const route of config.routes) if (route.handler !== undefined) folders.add(path.dirname(route.handler))
  let timer: NodeJS.Timeout | undefined
  let changed = ''
  const watchers: FSWatcher[] = []
  for (const folder of folders) {
    try {
      watchers.push(watch(folder, { recursive: true }, (_event, name) => {
        if (name === null || /(^|\/)(node_modules|\.git)(\/|$)/.test(name)) return
        changed = path.join(folder, name)
        clearTimeout(timer)
        timer = setTimeout(() => onChange(changed), 200)
      }))
    } catch (error) {
      logger.warn({ folder, err: error }, 'watch: cannot watch this folder')
    }
  }
  logger.info({ folders: [...folders] }, 'watching for changes (--watch)')
  return () => {
    clearTimeout(timer)
    for (const watcher of watchers) watcher.close()
  }
}
