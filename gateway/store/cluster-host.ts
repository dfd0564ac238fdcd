/**
 * The primary's side of the cluster store: one MemoryStore holds every session of the host, and each
 * attached worker reaches it over IPC (cluster-protocol.ts). The primary runs no handler code, so a
 * worker that dies takes no session with it.
 *
 *   worker A ──update──► host ──► MemoryStore
 *                          ├──► { invalidate } to workers B, C   (their caches drop the record)
 *                          └──► { reply } to A                   (A caches the new record)
 *   worker A ──publish──► host ──► { bus } to A, B, C ──► { reply } to A
 */
import { EdgeError } from '../wire/errors.ts'
import type { MemoryStore } from './memory.ts'
import { isStoreMessage, type CallMessage, type IpcPeer, type StoreMessage } from './cluster-protocol.ts'
import type { BusMessage, DocOwner, SessionChange, SessionRecord } from './store.ts'
import type { CacheBounds, CacheWrite } from './cache-table.ts'

export class ClusterStoreHost {
  readonly #store: MemoryStore
  readonly #peers = new Set<IpcPeer>()

  constructor(store: MemoryStore) {
    this.#store = store
  }

  /** Serves a worker's store calls until it disconnects; returns a function that detaches it sooner. */
  attach(peer: IpcPeer): () => void {
    const onMessage = (message: unknown): void => {
      if (isStoreMessage(message) && 'call' in message) void this.#serve(peer, message)
    }
    const detach = (): void => {
      this.#peers.delete(peer)
      peer.off('message', onMessage)
      peer.off('disconnect', detach)
    }
    this.#peers.add(peer)
    peer.on('message', onMessage)
    peer.on('disconnect', detach)
    return detach
  }

  close(): Promise<void> {
    this.#peers.clear()
    return this.#store.close()
  }

  async #serve(peer: IpcPeer, { call, op, args, deadline }: CallMessage): Promise<void> {
    if (deadline !== undefined && Date.now() > deadline) {
      send(peer, { mcpEdgeStore: 1, reply: call, late: true, error: `the ${op} reached the cluster primary after its deadline and was not applied` })
      return
    }
    let value: unknown
    try {
      value = await this.#run(peer, op, args)
    } catch (error) {
      const code = error instanceof EdgeError ? error.code : undefined
      send(peer, { mcpEdgeStore: 1, reply: call, error: error instanceof Error ? error.message : String(error), ...(code === undefined ? {} : { code }) })
      return
    }
    send(peer, { mcpEdgeStore: 1, reply: call, value })
  }

  async #run(peer: IpcPeer, op: CallMessage['op'], args: unknown[]): Promise<unknown> {
    const store = this.#store
    const id = args[0] as string
    switch (op) {
      case 'create':
        await store.create(args[0] as SessionRecord, args[1] as number)
        return undefined
      case 'get': {
        const record = await store.get(id)
        return record === undefined ? undefined : { record, ...store.lifetime(id) }
      }
      case 'update': {
        const record = await store.update(id, args[1] as SessionChange)
        if (record !== undefined) this.#invalidate(id, peer)
        return record === undefined ? undefined : { record, ...store.lifetime(id) }
      }
      case 'touch':
        store.touch(id)
        return store.lifetime(id) !== undefined
      case 'delete': {
        const existed = await store.delete(id)
        this.#invalidate(id, peer)
        return existed
      }
      case 'count':
        return store.count(id)
      case 'sessionIds':
        return store.sessionIds(id)
      case 'append':
        return store.append(id, args[1] as string, args[2] as string)
      case 'replay':
        return store.replay(id, args[1] as string)
      case 'publish':
        this.#broadcast({ mcpEdgeStore: 1, bus: args[0] as string, message: args[1] as BusMessage })
        return undefined
      case 'ready':
        return store.ready()
      case 'taskRead':
        return store.tasks.readNow(id)
      case 'taskWrite':
        return store.tasks.writeNow(id, args[1] as string, args[2] as number, args[3] as number, (args[4] ?? undefined) as string | undefined)
      case 'taskList':
        return store.tasks.listNow(id, args[1] as number)
      case 'taskCount':
        return store.tasks.countNow(id)
      case 'cacheRead':
        return store.cache.readNow(args[0] as string[], args[1] as string[])
      case 'cacheWrite':
        return store.cache.writeNow(args[0] as CacheWrite, args[1] as number, args[2] as CacheBounds)
      case 'cacheDrop':
        return store.cache.dropNow(args[0] as string)
      case 'cacheUsage':
        return store.cache.usageNow(args[0] as string)
      case 'readDoc':
        return store.readDoc(args[0] as DocOwner)
      case 'writeDoc':
        return store.writeDoc(args[0] as DocOwner, args[1] as number, args[2] as string)
    }
  }

  /** Tells every worker but the one that made the change to drop its copy of the record. */
  #invalidate(id: string, except: IpcPeer): void {
    for (const peer of this.#peers) if (peer !== except) send(peer, { mcpEdgeStore: 1, invalidate: id })
  }

  #broadcast(message: StoreMessage): void {
    for (const peer of this.#peers) send(peer, message)
  }
}

/** Sends over IPC, ignoring a peer that is going away (it is detached on its 'disconnect'). */
function send(peer: IpcPeer, message: StoreMessage): void {
  try {
    peer.send(message, () => undefined)
  } catch {
    // The channel closed between the check and the send: the worker is gone.
  }
}
