// The processes a gateway started for its stdio upstreams, found from the outside as an operator (or
// a crash) would see them: /proc, by parent and command line.
import { existsSync, readdirSync, readFileSync } from 'node:fs'

/** Pids of the live (not zombie) processes whose parent is `parent` and whose command line contains `match`. */
export function childrenOf(parent: number, match: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (fields[0] === 'Z' || Number(fields[1]) !== parent) continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(match)) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/** The upstreams' states of `route` in `url`'s /readyz. */
export async function readyz(url: string, route: string): Promise<Record<string, { state: string; reason?: string }>> {
  const body = (await (await fetch(`${url}/readyz`)).json()) as { upstreams?: Record<string, Record<string, { state: string; reason?: string }>> }
  return body.upstreams?.[route] ?? {}
}

/**
 * True once `pid` is reaped: its parent has seen it exit (a zombie is dead but its parent, the
 * gateway, may not have been told yet, and would still write to it).
 */
export function reaped(pid: number): boolean {
  return !existsSync(`/proc/${pid}`)
}
