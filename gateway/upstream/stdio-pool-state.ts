/**
 * Each principal's (or session's) own folder, for a stdio upstream with `state_dir`: a server that
 * keeps its state in files (server-memory's knowledge graph, a notes store, a sqlite file) writes
 * them wherever its configuration says, which is the same place for every child of the upstream, so
 * separate children (`isolation: principal | session`) still shared one user's data with the next.
 *
 *   state_dir/principal-<sha-256 of the principal, 32 hex digits>/   kept: the principal's data, on every worker and host that mounts it
 *   state_dir/session-<random uuid>/                                removed once the session's child has stopped (the session ended)
 *
 * `{state_dir}` in the child's `command` and `env` stands for it, e.g.
 * `env: { MEMORY_FILE_PATH: "{state_dir}/memory.jsonl" }`. The child's working directory stays the
 * upstream's `cwd`: a command's relative paths (`../node_modules/…/index.js`) keep meaning what they
 * meant. No principal's name reaches the disk.
 */
import { createHash, randomUUID } from 'node:crypto'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { STATE_DIR_TOKEN, type StdioUpstreamConfig } from './stdio-pool-config.ts'

/** How one child is started: its argv, environment and working directory. */
export interface Launch {
  readonly command: string[]
  readonly env: Record<string, string>
  readonly cwd: string
  /** The unit's folder, made before the child starts. */
  readonly folder: string
}

/** The folder of the group `groupKey` (`p:<principal>` or `s:<serial>`, stdio-pool-group.ts) under `stateDir`. */
export function unitFolder(stateDir: string, groupKey: string): string {
  if (groupKey.startsWith('p:')) return path.join(stateDir, `principal-${createHash('sha256').update(groupKey.slice(2)).digest('hex').slice(0, 32)}`)
  return path.join(stateDir, `session-${randomUUID()}`)
}

/** `config`'s launch for the unit whose folder is `folder`: `{state_dir}` filled in. */
export function launchIn(config: StdioUpstreamConfig, folder: string): Launch {
  const fill = (text: string): string => text.replaceAll(STATE_DIR_TOKEN, folder)
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(config.env)) env[name] = fill(value)
  return { command: config.command.map(fill), env, cwd: config.cwd, folder }
}

/** Makes the folder (only its owner may read it) before its child starts. */
export async function prepareFolder(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o700 })
}

/** Removes a session's folder once `stopped` (its children's stops) settle; a failure is only logged by the caller. */
export async function removeFolder(folder: string, stopped: Promise<unknown>): Promise<void> {
  await stopped.catch(() => undefined)
  await rm(folder, { recursive: true, force: true })
}
