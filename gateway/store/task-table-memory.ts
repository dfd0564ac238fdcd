/**
 * The task table in this process's memory: the memory store's, and the cluster primary's (which
 * serves it to its workers over IPC). Expired entries are dropped when met and by a periodic sweep.
 */
import type { TaskEntry, TaskTable } from './task-table.ts'

interface Slot extends TaskEntry {
  readonly expiresAt: number
  readonly owner: string | undefined
}

const SWEEP_MS = 30_000

export class MemoryTaskTable implements TaskTable {
  readonly #entries = new Map<string, Slot>()
  /** Keys by owner, in the order they were first written. */
  readonly #owners = new Map<string, Set<string>>()
  readonly #sweeper: NodeJS.Timeout

  constructor() {
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_MS)
    this.#sweeper.unref()
  }

  async read(key: string): Promise<TaskEntry | undefined> {
    return this.readNow(key)
  }

  /** `read` without a promise, for the cluster primary. */
  readNow(key: string): TaskEntry | undefined {
    const slot = this.#entries.get(key)
    if (slot === undefined) return undefined
    if (slot.expiresAt <= Date.now()) {
      this.#drop(key, slot)
      return undefined
    }
    return { version: slot.version, data: slot.data }
  }

  async write(key: string, data: string, expected: number, ttlMs: number, owner?: string): Promise<number> {
    return this.writeNow(key, data, expected, ttlMs, owner)
  }

  /** `write` without a promise, for the cluster primary. */
  writeNow(key: string, data: string, expected: number, ttlMs: number, owner?: string): number {
    const current = this.readNow(key)
    if ((current?.version ?? 0) !== expected) return 0
    const version = expected + 1
    const kept = this.#entries.get(key)?.owner ?? owner
    this.#entries.set(key, { version, data, expiresAt: Date.now() + ttlMs, owner: kept })
    if (kept !== undefined) {
      let keys = this.#owners.get(kept)
      if (keys === undefined) this.#owners.set(kept, (keys = new Set()))
      keys.add(key)
    }
    return version
  }

  async list(owner: string, max: number): Promise<string[]> {
    return this.listNow(owner, max)
  }

  /** `list` without a promise, for the cluster primary. */
  listNow(owner: string, max: number): string[] {
    const found: string[] = []
    for (const key of this.#owners.get(owner) ?? []) {
      const entry = this.readNow(key)
      if (entry !== undefined && found.length < max) found.push(entry.data)
    }
    return found
  }

  async count(owner: string): Promise<number> {
    return this.countNow(owner)
  }

  /** `count` without a promise, for the cluster primary. */
  countNow(owner: string): number {
    let live = 0
    for (const key of this.#owners.get(owner) ?? []) if (this.readNow(key) !== undefined) live++
    return live
  }

  close(): void {
    clearInterval(this.#sweeper)
    this.#entries.clear()
    this.#owners.clear()
  }

  #drop(key: string, slot: Slot): void {
    this.#entries.delete(key)
    if (slot.owner === undefined) return
    const keys = this.#owners.get(slot.owner)
    keys?.delete(key)
    if (keys?.size === 0) this.#owners.delete(slot.owner)
  }

  #sweep(): void {
    const now = Date.now()
    for (const [key, slot] of this.#entries) if (slot.expiresAt <= now) this.#drop(key, slot)
  }
}
