/**
 * How a change to a task travels. The record changes in the store (task-repo.ts); a changed status is
 * then announced on the route's bus, so every worker's pollers (tasks/result) wake, and as
 * notifications/tasks/status to a 2025-11-25 owner session. The bus also carries what only the
 * worker running the callback can act on: a cancellation, and answers stored by tasks/update.
 *
 *   change(id, edit) ─► repo ─► status changed? ─► bus {status} ─► every worker: wake its pollers
 *                                                 └► 2025-11-25 owner session: notifications/tasks/status
 *   publish(id, cancel │ input) ─► bus ─► every worker: onCancel │ onInput (a no-op where it does not run)
 *
 * Kept apart from task-service.ts, which decides what changes; this owns where a change goes.
 */
import type { Logger } from 'pino'
import type { TaskMessage } from '../store/bus-message.ts'
import type { SessionStore } from '../store/store.ts'
import { notification, type JsonRpcMessage } from '../wire/jsonrpc.ts'
import { coreTask, type TaskRecord } from './task-record.ts'
import type { TaskRepo } from './task-repo.ts'

export interface TaskChangesHost {
  readonly location: string
  readonly store: SessionStore
  readonly logger: Logger
  /** Sends on a session's standalone stream, wherever it is open. */
  notifySession(sessionId: string, message: JsonRpcMessage): void
  /** The client cancelled `task` (from any worker). */
  onCancel(task: string): void
  /** Answers for `task` were stored (from any worker). */
  onInput(task: string): void
}

export class TaskChanges {
  readonly #host: TaskChangesHost
  readonly #repo: TaskRepo
  readonly #channel: string
  /** Pollers waiting for a task's next change here (tasks/result), by task id. */
  readonly #wakers = new Map<string, Set<() => void>>()
  readonly #unsubscribe: () => void

  constructor(host: TaskChangesHost, repo: TaskRepo) {
    this.#host = host
    this.#repo = repo
    this.#channel = `tasks:${host.location}`
    this.#unsubscribe = host.store.bus.subscribe(this.#channel, (message) => {
      if (message.type === 'task') this.#fromBus(message)
    })
  }

  /** A change to a task; a changed status is announced (2025-11-25 sessions, waiting pollers). */
  async change(id: string, edit: (record: TaskRecord) => boolean): Promise<{ record: TaskRecord | undefined; changed: boolean }> {
    const before = { status: '' as string }
    const outcome = await this.#repo.change(id, (r) => {
      before.status = r.status
      return edit(r)
    })
    const after = outcome.record
    if (outcome.changed && after !== undefined && after.status !== before.status) {
      this.publish(id, 'status')
      if (after.era === 'core' && after.owner.startsWith('s:')) {
        this.#host.notifySession(after.owner.slice(2), notification('notifications/tasks/status', coreTask(after)))
      }
    }
    return outcome
  }

  publish(task: string, event: TaskMessage['event']): void {
    this.#host.store.bus.publish(this.#channel, { type: 'task', task, event }).catch((error: unknown) => {
      this.#host.logger.warn({ err: error, taskId: task, event }, 'bus publish failed')
    })
  }

  /** Resolves at the task's next status change heard here, after `waitMs`, or when `signal` fires. */
  nextChange(id: string, waitMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let wakers = this.#wakers.get(id)
      if (wakers === undefined) this.#wakers.set(id, (wakers = new Set()))
      const done = (): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        wakers.delete(done)
        if (wakers.size === 0) this.#wakers.delete(id)
        resolve()
      }
      const timer = setTimeout(done, waitMs)
      wakers.add(done)
      signal.addEventListener('abort', done)
    })
  }

  close(): void {
    this.#unsubscribe()
  }

  #fromBus(message: TaskMessage): void {
    switch (message.event) {
      case 'cancel':
        this.#host.onCancel(message.task)
        break
      case 'input':
        this.#host.onInput(message.task)
        break
      case 'status':
        for (const wake of this.#wakers.get(message.task) ?? []) wake()
        break
    }
  }
}
