/**
 * Where each side of a benchmark runs. With two cores or more the load (wrk, the runner's own
 * clients) gets the last core and the servers under test the others (with two cores: core 0, so a
 * 2-worker cluster shares one core), and neither steals the other's CPU.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const cores = availableParallelism()
/** Linux's USER_HZ: /proc reports CPU times in these ticks. */
const CLOCK_TICKS = 100
/** True when servers and load generators run on separate cores. */
export const PINNED = cores >= 2 && hasTaskset()
export const SERVER_CORES = cores >= 3 ? `0-${cores - 2}` : '0'
export const LOAD_CORE = String(Math.max(1, cores - 1))

/** `command args` pinned to `cpuList` when pinning is possible (taskset execs it, so the pid is the command's). */
export function pinned(cpuList: string, command: string, args: string[]): [string, string[]] {
  return PINNED ? ['taskset', ['-c', cpuList, command, ...args]] : [command, args]
}

/** Moves a running process (every thread) to `cpuList`, when pinning is possible. */
export function movePid(pid: number, cpuList: string): void {
  if (PINNED) execFileSync('taskset', ['-a', '-cp', cpuList, String(pid)], { stdio: 'ignore' })
}

/** Moves this process (every thread) to the load core, so clients run in the runner never share the server's. */
export function pinSelfToLoadCore(): void {
  if (PINNED) execFileSync('taskset', ['-a', '-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' })
}

export function describeCpus(): string {
  return PINNED ? `${cores} cores: servers on ${SERVER_CORES}, load on ${LOAD_CORE}` : `${cores} core(s), unpinned`
}

/** utime + stime of one process, µs, from /proc (undefined where there is no /proc or it has exited). */
function ownCpuUs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

/** Child pids of `pid` (every thread's children), from /proc. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    )
  } catch {
    return []
  }
}

/**
 * CPU (user + system, µs) used so far by `pid` and every process under it (a cluster's workers), or
 * undefined without /proc. Read before and after a run, it gives the server's CPU per request: a
 * measure a busy neighbour disturbs far less than req/s, since it counts only the time the server ran.
 */
export function processTreeCpuUs(pid: number): number | undefined {
  const own = ownCpuUs(pid)
  if (own === undefined) return undefined
  let total = own
  for (const child of childrenOf(pid)) total += processTreeCpuUs(child) ?? 0
  return total
}
