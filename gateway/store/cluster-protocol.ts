/**
 * The IPC messages between the cluster primary, which holds the sessions (cluster-host.ts), and its
 * workers (cluster-client.ts): the node:cluster analogue of OpenResty's shared dict. Every message
 * carries `mcpEdgeStore` so both ends can share the channel with other IPC traffic.
 *
 *   worker ──{ call, op, args }──────────► primary   a store operation (or a bus publish)
 *   worker ◄─{ reply, value | error }───── primary
 *   worker ◄─{ invalidate: id }─────────── primary   another worker changed or deleted the record
 *   worker ◄─{ bus: channel, message }──── primary   a bus message, to every worker
 */
import cluster from 'node:cluster'
import type { EdgeCodeName } from '../wire/errors.ts'
import type { BusMessage, SessionRecord } from './store.ts'

/** One end of an IPC channel: `process` in a worker, a cluster `Worker` or a `ChildProcess` in the primary. */
export interface IpcPeer {
  send(message: unknown, callback?: (error: Error | null) => void): boolean
  on(event: 'message', listener: (message: unknown) => void): unknown
  on(event: 'disconnect', listener: () => void): unknown
  off(event: 'message', listener: (message: unknown) => void): unknown
  off(event: 'disconnect', listener: () => void): unknown
}

export type StoreOp = 'create' | 'get' | 'update' | 'touch' | 'delete' | 'count' | 'sessionIds' | 'append' | 'replay' | 'publish' | 'ready' | 'taskRead' | 'taskWrite' | 'taskList' | 'taskCount' | 'readDoc' | 'writeDoc' | 'cacheRead' | 'cacheWrite' | 'cacheDrop' | 'cacheUsage'

/**
 * `deadline` (a write's; ms since the epoch, the host's one clock): past it the primary does not apply
 * the write, since the worker has answered (or is about to answer) its request as failed: a primary
 * stalled for seconds (a long GC, SIGSTOP, swap) must not end a session after the client got 503.
 */
export interface CallMessage { mcpEdgeStore: 1; call: number; op: StoreOp; args: unknown[]; deadline?: number }

/** Operations that change what the primary holds: each carries a deadline (cluster-client.ts). */
export const WRITE_OPS: ReadonlySet<StoreOp> = new Set<StoreOp>(['create', 'update', 'delete', 'append', 'taskWrite', 'writeDoc'])
/** `code`: an EdgeError's row (a refusal the store made, such as a full store), rebuilt as one by the worker. */
export interface ReplyMessage { mcpEdgeStore: 1; reply: number; value?: unknown; error?: string; code?: EdgeCodeName; late?: true }
export interface InvalidateMessage { mcpEdgeStore: 1; invalidate: string }
export interface BusDelivery { mcpEdgeStore: 1; bus: string; message: BusMessage }
export type StoreMessage = CallMessage | ReplyMessage | InvalidateMessage | BusDelivery

/**
 * The channel to the cluster primary: `given`, else this process's own when it is a node:cluster
 * worker. Throws when there is none (the cluster store and its limiter live in the primary).
 */
export function primaryPeer(given: IpcPeer | undefined): IpcPeer {
  const primary = given ?? (cluster.isWorker ? (process as unknown as IpcPeer) : undefined)
  if (primary === undefined) {
    throw new Error('store type cluster lives in the cluster primary: start the gateway with `mcp-edge start` (workers > 1 or store type cluster)')
  }
  return primary
}

export function isStoreMessage(message: unknown): message is StoreMessage {
  return typeof message === 'object' && message !== null && (message as { mcpEdgeStore?: unknown }).mcpEdgeStore === 1
}

/**
 * A record as it arrives over IPC (JSON drops undefined fields), rebuilt with every field present, so
 * it compares equal to the record that was stored.
 */
export function reviveRecord(raw: SessionRecord): SessionRecord {
  const record: SessionRecord = {
    id: raw.id,
    route: raw.route,
    protocolVersion: raw.protocolVersion,
    clientInfo: raw.clientInfo,
    clientCapabilities: raw.clientCapabilities ?? {},
    principal: raw.principal,
    createdAt: raw.createdAt,
    initialized: raw.initialized,
    logLevel: raw.logLevel,
    subscriptions: raw.subscriptions ?? [],
    hidden: raw.hidden ?? [],
  }
  if (raw.upstreams !== undefined) record.upstreams = raw.upstreams
  if (raw.catalogue !== undefined) record.catalogue = raw.catalogue
  return record
}
