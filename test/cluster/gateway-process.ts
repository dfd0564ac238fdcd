// Real gateways in child processes (`mcp-edge start`), as an operator runs them: a config file, a
// port, JSON logs on stdout. Every process is killed at teardown.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { reapOnExit } from '../store/reaper.ts'
import { onFreePort } from '../fixtures/waiting.ts'

interface Teardown { teardown(fn: () => unknown): void }

const bin = fileURLToPath(new URL('../../gateway/bin.mjs', import.meta.url))
export const livePid = fileURLToPath(new URL('./fixtures/live-pid.ts', import.meta.url))

/** The requestState key of test gateways on a Redis store that name none, shared like a deployment's. */
const SHARED_REQUEST_STATE_KEY = 'test-hosts-share-this-request-state-key'

/** The route every cluster test serves: live.ts plus `whoami`. */
export const liveRoute = { location: '/live', handler: livePid, server: { name: 'live', version: '1.0.0' }, read_timeout: 5 }

export interface GatewayProcess {
  readonly url: string
  readonly child: ChildProcess
  /** Every JSON log line so far. */
  readonly logs: Array<Record<string, unknown>>
  /** Resolves with the first log line (from now or earlier) that `match` accepts. */
  logged(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>
  /** Sends `signal` to the process (the primary under cluster) and resolves with its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Starts `mcp-edge start` on a free port with `config` (YAML keys); resolves once `listeners` processes
 * listen. `fileLimit` runs it under that `ulimit -n` (the shell execs node, so the pid is the gateway's);
 * `nodeOptions` are added to the gateway's NODE_OPTIONS (a heap limit, say).
 */
export async function startGatewayProcess(t: Teardown, config: object, listeners = 1, startTimeoutMs = 30_000, fileLimit?: number, nodeOptions?: string): Promise<GatewayProcess> {
  const start = (port: number): Promise<GatewayProcess> => startOn(port, t, config, listeners, startTimeoutMs, fileLimit, nodeOptions)
  // A single process binds port 0 and logs the port it got: nothing can take the port between the
  // choice and the bind. (With a port chosen first, a test beside this one could take it in that
  // window; the gateway then exited and the start failed only at its timeout, seen beside two CPU
  // hogs.) A cluster keeps a chosen port, so that a worker forked after every other one died binds
  // the same one; it is started again on another when that port was taken.
  const workers = (config as { workers?: unknown }).workers
  return workers === undefined || workers === 1 ? start(0) : onFreePort(start)
}

async function startOn(port: number, t: Teardown, config: object, listeners: number, startTimeoutMs: number, fileLimit?: number, nodeOptions?: string): Promise<GatewayProcess> {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-edge-cluster-'))
  const file = path.join(folder, 'gateway.yaml')
  // A Redis store needs a requestState key shared by the hosts (`mcp-edge start` refuses to run without one).
  const shared = (config as { store?: { type?: string } }).store?.type === 'redis' && !('request_state' in config) ? { request_state: { key: SHARED_REQUEST_STATE_KEY } } : {}
  // JSON is YAML.
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port }, log: { level: 'info' }, ...shared, ...config }))
  const command = fileLimit === undefined
    ? [process.execPath, bin, 'start', '--config', file]
    : ['/bin/sh', '-c', `ulimit -n ${fileLimit} && exec "$0" "$@"`, process.execPath, bin, 'start', '--config', file]
  const env = nodeOptions === undefined ? { ...process.env } : { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${nodeOptions}`.trim() }
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env })
  // Killing the primary is enough: its workers drain and exit when it goes.
  reapOnExit(child)
  const logs: Array<Record<string, unknown>> = []
  const waiters = new Set<() => void>()
  let stderr = ''
  let buffered = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>)
      } catch {
        continue
      }
      for (const wake of waiters) wake()
    }
  })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // The primary first (so it does not restart its workers), then anything it left behind.
      const workers = logs.filter((line) => line.msg === 'mcp-edge listening').map((line) => line.pid as number)
      child.kill('SIGKILL')
      for (const pid of workers) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
      await exited
    }
    rmSync(folder, { recursive: true, force: true })
  })

  function logged(match: (line: Record<string, unknown>) => boolean, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = logs.find(match)
        if (found === undefined) return
        cleanup()
        resolve(found)
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`no matching log line within ${timeoutMs} ms; stderr: ${stderr}`))
      }, timeoutMs)
      const cleanup = (): void => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
    })
  }

  const listening = (): Array<Record<string, unknown>> => logs.filter((line) => line.msg === 'mcp-edge listening')
  // A process that exits before it listens fails the start at once, with its stderr.
  let started = false
  const exitedEarly = exited.then((code) => {
    if (!started) throw new Error(`mcp-edge start exited (code ${code}) before it listened; stderr: ${stderr}`)
  })
  exitedEarly.catch(() => undefined)
  try {
    await Promise.race([logged(() => listening().length >= listeners, startTimeoutMs), exitedEarly])
  } finally {
    started = true
  }
  const url = port === 0 ? String(listening()[0]!.url) : `http://127.0.0.1:${port}`
  return {
    url,
    child,
    logs,
    logged,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      child.kill(signal)
      return exited
    },
  }
}
