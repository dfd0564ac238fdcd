/**
 * A worker's side of the cluster store: every operation is an IPC call to the primary
 * (cluster-host.ts), except a `get` that the record cache answers and a `touch` inside its window.
 * One IPC channel carries replies, invalidations and bus messages in the order the primary sent them,
 * so a cached record never outlives the invalidation that followed it.
 */
import { EdgeError } from '../wire/errors.ts'
import { MemoryBus } from './memory.ts'
import { RecordCache, type LoadedRecord } from './record-cache.ts'
import { isStoreMessage, reviveRecord, WRITE_OPS, type IpcPeer, type StoreOp } from './cluster-protocol.ts'
import { CALL_TIMEOUT_MS, PendingCalls } from './pending-calls.ts'
import type { Bus, BusMessage, DocOwner, DocWrite, SessionChange, SessionRecord, SessionStore, StoredDoc, StoredEvent } from './store.ts'
import { StoreUnavailableError } from './store.ts'
import type { TaskEntry, TaskTable } from './task-table.ts'
import type { CacheRead, CacheTable } from './cache-table.ts'

interface Lifetime { record: SessionRecord; idleTtlMs: number; expiresInMs: number }

/**
 * The share of the call timeout a write has to reach the primary, as for Redis (redis-deadline.ts):
 * the rest is for its reply, so a write the worker gave up on is never applied afterwards.
 */
const WRITE_REACH_MS = Math.floor(CALL_TIMEOUT_MS * 0.75)

export class ClusterStore implements SessionStore {
  readonly bus: Bus
  readonly tasks: TaskTable
  readonly cache: CacheTable
  readonly #local = new MemoryBus()
  readonly #cache = new RecordCache()
  readonly #primary: IpcPeer
  readonly #pending = new PendingCalls()
  readonly #onMessage: (message: unknown) => void
  readonly #onDisconnect: () => void

  /** `primary` is `process` in a cluster worker (or a forked child's handle in tests). */
  constructor(primary: IpcPeer) {
    this.#primary = primary
    this.#onMessage = (message) => this.#receive(message)
    this.#onDisconnect = () => this.#lost('the cluster primary is gone')
    primary.on('message', this.#onMessage)
    primary.on('disconnect', this.#onDisconnect)
    this.bus = {
      publish: async (channel: string, message: BusMessage) => {
        await this.#call('publish', [channel, message])
      },
      subscribe: (channel, listener) => this.#local.subscribe(channel, listener),
    }
    this.tasks = {
      read: async (key) => ((await this.#call('taskRead', [key])) ?? undefined) as TaskEntry | undefined,
      write: async (key, data, expected, ttlMs, owner) => (await this.#call('taskWrite', [key, data, expected, ttlMs, owner ?? null])) as number,
      list: async (owner, max) => (await this.#call('taskList', [owner, max])) as string[],
      count: async (owner) => (await this.#call('taskCount', [owner])) as number,
    }
    this.cache = {
      read: async (keys, groups) => {
        // IPC is JSON: an absent value arrives as null.
        const read = (await this.#call('cacheRead', [keys, groups])) as { values: Array<string | null>; generations: number[] }
        return { values: read.values.map((value) => value ?? undefined), generations: read.generations } satisfies CacheRead
      },
      write: async (entry, generation, bounds) => (await this.#call('cacheWrite', [entry, generation, bounds])) as boolean,
      drop: async (group) => void (await this.#call('cacheDrop', [group])),
      usage: async (route) => (await this.#call('cacheUsage', [route])) as { route: number; total: number; entries: number },
    }
  }

  async create(record: SessionRecord, idleTtlMs: number): Promise<void> {
    await this.#call('create', [record, idleTtlMs])
    this.#cache.put(record.id, { record, version: 0, idleTtlMs, expiresInMs: idleTtlMs })
  }

  peek(id: string): SessionRecord | undefined {
    return this.#cache.peek(id)
  }

  get(id: string): Promise<SessionRecord | undefined> {
    return this.#cache.get(id, async () => this.#loaded((await this.#call('get', [id])) as Lifetime | undefined))
  }

  async update(id: string, change: SessionChange): Promise<SessionRecord | undefined> {
    const loaded = this.#loaded((await this.#call('update', [id, change])) as Lifetime | undefined)
    if (loaded === undefined) return undefined
    this.#cache.put(id, loaded)
    return loaded.record
  }

  touch(id: string): void {
    const now = Date.now()
    if (!this.#cache.touchDue(id, now)) return
    this.#call('touch', [id]).then(
      (alive) => {
        if (alive === true) this.#cache.touched(id, now)
      },
      () => undefined,
    )
  }

  async delete(id: string): Promise<boolean> {
    const existed = (await this.#call('delete', [id])) as boolean
    this.#cache.invalidate(id)
    return existed
  }

  async count(route: string): Promise<number> {
    return (await this.#call('count', [route])) as number
  }

  async sessionIds(route: string): Promise<string[]> {
    return (await this.#call('sessionIds', [route])) as string[]
  }

  async append(sessionId: string, stream: string, data: string): Promise<string> {
    return (await this.#call('append', [sessionId, stream, data])) as string
  }

  async replay(sessionId: string, afterId: string): Promise<{ stream: string; events: StoredEvent[] } | undefined> {
    return ((await this.#call('replay', [sessionId, afterId])) ?? undefined) as { stream: string; events: StoredEvent[] } | undefined
  }

  async readDoc(owner: DocOwner): Promise<StoredDoc | undefined> {
    return ((await this.#call('readDoc', [owner])) ?? undefined) as StoredDoc | undefined
  }

  async writeDoc(owner: DocOwner, expected: number, value: string): Promise<DocWrite> {
    return (await this.#call('writeDoc', [owner, expected, value])) as DocWrite
  }

  async ready(): Promise<boolean> {
    if (this.#pending.gone) return false
    return this.#call('ready', []).then((ready) => ready === true, () => false)
  }

  async close(): Promise<void> {
    this.#primary.off('message', this.#onMessage)
    this.#primary.off('disconnect', this.#onDisconnect)
    this.#lost('the store is closed')
  }

  #loaded(value: Lifetime | undefined): LoadedRecord | undefined {
    if (value === undefined || value === null) return undefined
    return { record: reviveRecord(value.record), version: 0, idleTtlMs: value.idleTtlMs, expiresInMs: value.expiresInMs }
  }

  #call(op: StoreOp, args: unknown[]): Promise<unknown> {
    return this.#pending.start(op, (call) => {
      try {
        const message = WRITE_OPS.has(op) ? { mcpEdgeStore: 1, call, op, args, deadline: Date.now() + WRITE_REACH_MS } : { mcpEdgeStore: 1, call, op, args }
        this.#primary.send(message, (error) => {
          if (error !== null) this.#pending.fail(call, new StoreUnavailableError(`cannot reach the cluster primary: ${error.message}`))
        })
      } catch (error) {
        // A closed channel reaches the callback; what throws here is a value that cannot be
        // serialised. That is this call's fault, not an unavailable store.
        this.#pending.fail(call, new Error(`cannot send ${op} to the cluster primary: ${(error as Error).message}`))
      }
    })
  }

  #receive(message: unknown): void {
    if (!isStoreMessage(message)) return
    if ('reply' in message) {
      if (message.error === undefined) this.#pending.settle(message.reply, message.value)
      else if (message.late === true) this.#pending.fail(message.reply, new StoreUnavailableError(message.error))
      else this.#pending.fail(message.reply, message.code === undefined ? new Error(message.error) : new EdgeError(message.code, message.error))
    }
    else if ('invalidate' in message) this.#cache.invalidate(message.invalidate)
    else if ('bus' in message) void this.#local.publish(message.bus, message.message)
  }

  #lost(reason: string): void {
    this.#cache.disable()
    this.#pending.lost(reason)
  }
}
