/**
 * Where each side of a benchmark runs. With two cores or more the load (wrk, the runner's own
 * clients) gets the last core and the servers under test the others (with two cores: core 0, so a
 * 2-worker cluster shares one core), and neither steals the other's CPU.
 */
import { execFileSync } from 'node:child_process'
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
/** True when servers and load generators run on separate cores. */
export const PINNED = cores >= 2 && hasTaskset()
export const SERVER_CORES = cores >= 3 ? `0-${cores - 2}` : '0'
export const LOAD_CORE = String(Math.max(1, cores - 1))

/** `command args` pinned to `cpuList` when pinning is possible (taskset execs it, so the pid is the command's). */
export function pinned(cpuList: string, command: string, args: string[]): [string, string[]] {
  return PINNED ? ['taskset', ['-c', cpuList, command, ...args]] : [command, args]
}

/** Moves this process (every thread) to the load core, so clients run in the runner never share the server's. */
export function pinSelfToLoadCore(): void {
  if (PINNED) execFileSync('taskset', ['-a', '-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' })
}

export function describeCpus(): string {
  return PINNED ? `${cores} cores: servers on ${SERVER_CORES}, load on ${LOAD_CORE}` : `${cores} core(s), unpinned`
}
