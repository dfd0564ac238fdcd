/**
 * A secret from the config: a value as written (after `${ENV}`, read at load and reload), or
 * `file:<path>`, read at start and again whenever the file changes, so a mounted secret (a Kubernetes
 * Secret volume swaps a symlink; an operator rewrites the file) rotates without a restart:
 *
 *   fs.watch(the file's folder) ─► any change ─► read again (trailing newline dropped) ─► changed? ─► onChange
 *
 * The folder is watched, not the file: a rename over the file (atomic rotation) ends a watch on the
 * file itself. A file that cannot be read later keeps the last value (logged without it).
 */
import { readFileSync, watch, type FSWatcher } from 'node:fs'
import path from 'node:path'
import type { Logger } from 'pino'
import { EdgeError } from '../../wire/errors.ts'

const FILE = 'file:'

export class SecretValue {
  readonly #file: string | undefined
  readonly #what: string
  readonly #logger: Logger
  #value: string
  #watcher: FSWatcher | undefined
  readonly #listeners: Array<() => void> = []

  /** `what` names the setting in messages (never its value). Throws MCP_EDGE_CONFIG_INVALID when the file cannot be read. */
  constructor(written: string, what: string, logger: Logger) {
    this.#what = what
    this.#logger = logger
    if (!written.startsWith(FILE)) {
      this.#file = undefined
      this.#value = written
      return
    }
    this.#file = written.slice(FILE.length)
    const value = this.#read()
    if (value === undefined) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `${what}: cannot read ${this.#file}`)
    this.#value = value
  }

  /** True when the value comes from a file (it may change). */
  get fromFile(): boolean {
    return this.#file !== undefined
  }

  get value(): string {
    return this.#value
  }

  /** Calls `listener` after the value changed; starts watching the file on first use. */
  onChange(listener: () => void): void {
    this.#listeners.push(listener)
    if (this.#file === undefined || this.#watcher !== undefined) return
    try {
      this.#watcher = watch(path.dirname(this.#file), { persistent: false }, () => this.reread())
      this.#watcher.on('error', () => undefined)
    } catch (error) {
      this.#logger.warn({ setting: this.#what, err: { message: (error as Error).message } }, 'cannot watch a secret file; it is read again on reload and after an upstream 401')
    }
  }

  /** Reads the file again now; true when the value changed. */
  reread(): boolean {
    if (this.#file === undefined) return false
    const value = this.#read()
    if (value === undefined) {
      this.#logger.warn({ setting: this.#what }, 'a secret file cannot be read; the last value is kept')
      return false
    }
    if (value === this.#value) return false
    this.#value = value
    this.#logger.info({ setting: this.#what }, 'a secret file changed; the new value is used from now on')
    for (const listener of this.#listeners) listener()
    return true
  }

  close(): void {
    this.#watcher?.close()
    this.#watcher = undefined
  }

  #read(): string | undefined {
    try {
      return readFileSync(this.#file!, 'utf8').replace(/\r?\n$/, '')
    } catch {
      return undefined
    }
  }
}
