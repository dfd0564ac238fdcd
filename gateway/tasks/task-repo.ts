/**
 * Task records and worker heartbeats in the store's task table. Every change is a compare-and-set
 * loop around a pure edit, so a completion on one worker and a cancellation on another settle to
 * exactly one terminal status, whichever wins, and nothing that reached a terminal status moves again.
 *
 *   change(id, edit) ─► read {version, record} ─► edit(copy) ─► write if version unchanged ─✗─► again
 */
import type { TaskTable } from '../store/task-table.ts'
import { isTerminal, type TaskRecord } from './task-record.ts'

/** Rounds of a compare-and-set loop before giving up (only a storm of writes on one task gets there). */
const MAX_ATTEMPTS = 16

const taskKey = (id: string): string => `task:${id}`
const workerKey = (worker: string): string => `worker:${worker}`

export class TaskRepo {
  readonly #table: TaskTable
  /** How long an unfinished task is kept at least: its worker may still finish it. */
  readonly #runningTtlMs: number

  constructor(table: TaskTable, runningTtlMs: number) {
    this.#table = table
    this.#runningTtlMs = runningTtlMs
  }

  /** Stores a new task; it is readable from every worker once this resolves. */
  async create(record: TaskRecord): Promise<void> {
    const version = await this.#table.write(taskKey(record.id), JSON.stringify(record), 0, this.#ttl(record), record.owner)
    if (version === 0) throw new Error(`task ${record.id} already exists`)
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    const entry = await this.#table.read(taskKey(id))
    return entry === undefined ? undefined : (JSON.parse(entry.data) as TaskRecord)
  }

  /**
   * Applies `edit` to the task and stores it; `edit` returns false to leave the record as it is.
   * Resolves to the record as stored (undefined when the task is gone), and whether `edit` changed it.
   */
  async change(id: string, edit: (record: TaskRecord) => boolean): Promise<{ record: TaskRecord | undefined; changed: boolean }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.#table.read(taskKey(id))
      if (entry === undefined) return { record: undefined, changed: false }
      const record = JSON.parse(entry.data) as TaskRecord
      if (!edit(record)) return { record, changed: false }
      record.updatedAt = Date.now()
      if ((await this.#table.write(taskKey(id), JSON.stringify(record), entry.version, this.#ttl(record), record.owner)) > 0) {
        return { record, changed: true }
      }
    }
    throw new Error(`task ${id} changed too often to be updated`)
  }

  /** The owner's tasks (at most `max`). */
  async list(owner: string, max: number): Promise<TaskRecord[]> {
    return (await this.#table.list(owner, max)).map((data) => JSON.parse(data) as TaskRecord)
  }

  /** How many tasks the owner holds (finished ones count until they expire). */
  count(owner: string): Promise<number> {
    return this.#table.count(owner)
  }

  /** Says that `worker` lives for `ttlMs` more. */
  async heartbeat(worker: string, ttlMs: number): Promise<void> {
    const key = workerKey(worker)
    const current = await this.#table.read(key)
    await this.#table.write(key, '1', current?.version ?? 0, ttlMs)
  }

  /** False once `worker` stopped beating (it died, or cannot reach the store). */
  async alive(worker: string): Promise<boolean> {
    return (await this.#table.read(workerKey(worker))) !== undefined
  }

  /** A finished task lives its TTL from its last change; an unfinished one at least as long as any may. */
  #ttl(record: TaskRecord): number {
    return isTerminal(record.status) ? record.ttlMs : Math.max(record.ttlMs, this.#runningTtlMs)
  }
}
