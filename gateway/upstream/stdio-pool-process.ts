/**
 * One child process of a stdio upstream: spawned as the leader of its own process group, so that
 * stopping it stops whatever it started too; stdout framed into bounded lines of JSON; stderr
 * framed into bounded lines for the gateway's log.
 *
 *   spawn (detached: own process group) ─► stdout ─► LineSplitter(max_message_size) ─► JSON.parse ─► onmessage
 *                                         stderr ─► LineSplitter(2 KiB, truncating) ─► log.info({ upstream, childPid, stderr })
 *   stop ─► end stdin ─► wait ─► SIGTERM to the group ─► wait ─► SIGKILL to the group (until the group is empty)
 *
 * A process group outlives its leader when a grandchild keeps running, so every stop, and every
 * unexpected exit of the leader, signals the whole group until none of it is left.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { Logger } from 'pino'
import sjson from 'secure-json-parse'
import { LineSplitter } from './stdio-pool-lines.ts'
import { groupGone, groupStarted, signalGroup } from './process-groups.ts'

/** Longest stderr line logged; the rest of a longer line is dropped (`truncated: true`). */
export const STDERR_LINE_MAX = 2048
/** How long a write that found stdin closed waits for the process's exit, to say how it ended. */
const EXIT_WAIT_MS = 500

/**
 * How many warnings about one child's bad output reach the log: 20 per minute, then one line
 * saying how many were left out, so a child that floods stdout with junk cannot flood the log.
 */
export class WarnBudget {
  #windowStart = 0
  #used = 0
  #suppressed = 0

  /** True when this warning may be logged; `log` receives the count suppressed before it, once. */
  allow(log: Logger, pid: number | undefined): boolean {
    const now = Date.now()
    if (now - this.#windowStart >= 60_000) {
      if (this.#suppressed > 0) log.warn({ childPid: pid, suppressed: this.#suppressed }, 'stdio upstream: warnings about bad output left out in the last minute')
      this.#windowStart = now
      this.#used = 0
      this.#suppressed = 0
    }
    if (this.#used < 20) {
      this.#used++
      return true
    }
    this.#suppressed++
    return false
  }
}

export interface ChildSpec {
  command: string[]
  env: Record<string, string>
  cwd: string
  maxMessageSize: number
  /** Already carries the upstream's name. */
  log: Logger
}

/** A running child: lines in, lines out, and a stop that leaves no process of its group behind. */
export class StdioChildProcess {
  readonly pid: number
  /** One parsed JSON value per stdout line. */
  onmessage?: (message: unknown) => void
  /** The leader exited (on its own or because it was stopped). */
  onexit?: (description: string) => void

  readonly #child: ChildProcess
  readonly #log: Logger
  /** Shared with the multiplexer, which warns about messages that parse but make no sense. */
  readonly warnings = new WarnBudget()
  readonly #exited: Promise<void>
  #running = true
  /** How the process ended (`exited with code 1`), once it has. */
  #ending: string | undefined

  private constructor(child: ChildProcess, spec: ChildSpec) {
    this.#child = child
    this.pid = child.pid!
    this.#log = spec.log
    groupStarted(this.pid)
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#running = false
        // Whatever the leader left in its group goes with it.
        if (signalGroup(this.pid, 'SIGTERM')) setTimeout(() => this.#reapGroup(), 1000).unref()
        else groupGone(this.pid)
        this.#ending = signal === null ? `exited with code ${code}` : `was ended by ${signal}`
        this.onexit?.(this.#ending)
        resolve()
      })
    })
    const stdout = new LineSplitter({
      maxBytes: spec.maxMessageSize,
      headBytes: 200,
      onLine: (line) => this.#line(line),
      onOversize: (head, bytes) => {
        if (this.warnings.allow(this.#log, this.pid)) this.#log.warn({ childPid: this.pid, bytes, head }, 'stdio upstream wrote a line over max_message_size; dropped')
      },
    })
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk))
    const stderr = new LineSplitter({
      maxBytes: STDERR_LINE_MAX,
      headBytes: STDERR_LINE_MAX,
      onLine: (line) => this.#log.info({ childPid: this.pid, stderr: line }),
      onOversize: (head, bytes) => this.#log.info({ childPid: this.pid, stderr: head, truncated: true, bytes }),
    })
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk))
    child.stderr!.once('end', () => stderr.end())
    // EPIPE after the child died, a pipe torn down: the exit handler reports what matters, and an
    // unhandled stream error would take the whole gateway down.
    for (const stream of [child.stdin!, child.stdout!, child.stderr!]) stream.on('error', () => undefined)
  }

  /** Spawns the command in a new process group; rejects when it cannot start (no such file, no permission). */
  static start(spec: ChildSpec): Promise<StdioChildProcess> {
    const [program, ...args] = spec.command
    let child: ChildProcess
    try {
      child = spawn(program!, args, { cwd: spec.cwd, env: spec.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true, windowsHide: true })
    } catch (error) {
      return Promise.reject(new Error(`could not start ${program}: ${(error as Error).message}`))
    }
    return new Promise((resolve, reject) => {
      child.once('spawn', () => {
        child.removeAllListeners('error')
        child.on('error', (error) => spec.log.warn({ childPid: child.pid, err: error.message }, 'stdio upstream process error'))
        resolve(new StdioChildProcess(child, spec))
      })
      child.once('error', (error) => reject(new Error(`could not start ${program}: ${error.message}`)))
    })
  }

  get running(): boolean {
    return this.#running
  }

  /** Writes one line to stdin; resolves once the pipe took it, rejects after `timeoutMs` or when stdin is gone. */
  write(line: string, timeoutMs: number): Promise<void> {
    const stdin = this.#child.stdin
    if (!this.#running || stdin === null || stdin.destroyed || stdin.writableEnded) return Promise.reject(new Error('the process is not running'))
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the process did not read its stdin within ${timeoutMs} ms`)), timeoutMs)
      stdin.write(line, (error) => {
        clearTimeout(timer)
        if (!error) return resolve()
        const failure = `writing to the process failed: ${error.message}`
        if ((error as NodeJS.ErrnoException).code !== 'EPIPE') return reject(new Error(failure))
        // A process that exits closes its stdin first: what a user needs is how it ended, when that
        // comes within a moment (a server that exits at once, before reading its initialize).
        const late = setTimeout(() => reject(new Error(failure)), EXIT_WAIT_MS)
        void this.#exited.then(() => {
          clearTimeout(late)
          reject(new Error(`${failure}: the process ${this.#ending}`))
        })
      })
    })
  }

  /**
   * Stops the child and everything in its group: stdin ends (a well-behaved server exits), then
   * SIGTERM, then SIGKILL, `graceMs` apart; resolves when no process of the group is left.
   */
  async stop(graceMs: number): Promise<void> {
    this.#child.stdin?.end()
    if (this.#running) await Promise.race([this.#exited, delay(graceMs)])
    if (!signalGroup(this.pid, 'SIGTERM')) return this.#gone()
    const deadline = Date.now() + graceMs
    while (Date.now() < deadline) {
      await delay(25)
      if (!signalGroup(this.pid, 0)) return this.#gone()
    }
    this.#log.warn({ childPid: this.pid }, 'stdio upstream ignored SIGTERM; killing its process group')
    signalGroup(this.pid, 'SIGKILL')
    // Bounded: a zombie still answers signal 0 until whoever adopted it reaps it.
    for (let waited = 0; waited < graceMs && signalGroup(this.pid, 0); waited += 10) await delay(10)
    await this.#exited
    this.#gone()
  }

  #gone(): void {
    groupGone(this.pid)
  }

  #reapGroup(): void {
    if (signalGroup(this.pid, 'SIGKILL')) setTimeout(() => this.#reapGroup(), 100).unref()
    else groupGone(this.pid)
  }

  #line(line: string): void {
    let message: unknown
    try {
      message = sjson.parse(line, undefined, { protoAction: 'remove', constructorAction: 'remove' })
    } catch {
      if (this.warnings.allow(this.#log, this.pid)) this.#log.warn({ childPid: this.pid, head: line.slice(0, 200) }, 'stdio upstream wrote a line that is not JSON; dropped')
      return
    }
    this.onmessage?.(message)
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
