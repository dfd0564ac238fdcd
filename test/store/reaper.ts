// Child processes of a test die with it, even when the test process is stopped (a tap timeout sends
// SIGTERM) before its teardowns run: a run leaves no redis-server or gateway behind.
import type { ChildProcess } from 'node:child_process'

const children = new Set<ChildProcess>()
let installed = false

function reap(): void {
  for (const child of children) child.kill('SIGKILL')
}

/** Kills `child` when this process exits or is told to stop, if it is still running then. */
export function reapOnExit(child: ChildProcess): void {
  children.add(child)
  child.once('exit', () => children.delete(child))
  if (installed) return
  installed = true
  process.once('exit', reap)
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      reap()
      process.exit(128 + (signal === 'SIGTERM' ? 15 : 2))
    })
  }
}
