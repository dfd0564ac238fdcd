/**
 * Where the admin listener runs and what it reads. One process: the host's gateway. Under the
 * cluster: the primary listens, asks every worker for its view over IPC and merges them, so the
 * answer covers the whole gateway, not the worker a connection happened to reach.
 *
 *   single process ── admin app ──► snapshotOf(host.gateway)
 *   primary ── admin app ──► { mcpEdgeAdmin: 'snapshot' } ──IPC──► each worker ──► snapshotOf ──► merge
 */
import cluster, { type Worker } from 'node:cluster'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { AdminConfig } from '../config/types.ts'
import { EdgeError } from '../wire/errors.ts'
import type { ReloadResult } from '../server/reload.ts'
import type { Gateway } from '../server/server.ts'
import { buildAdminApp, type AdminSource } from './admin-app.ts'
import { mergeSnapshots, snapshotOf, type GatewaySnapshot } from './snapshot.ts'

/** How long the primary waits for a worker's view before answering without it. */
export const WORKER_SNAPSHOT_TIMEOUT_MS = 5000

interface SnapshotRequest { mcpEdgeAdmin: 'snapshot'; id: number }
interface SnapshotReply { mcpEdgeAdmin: 'snapshot-reply'; id: number; snapshot?: GatewaySnapshot; error?: string }

/** Listens on `config.listen`; resolves with the app (to close) and the address it bound. */
export async function startAdmin(config: AdminConfig, source: AdminSource, logger: Logger): Promise<{ app: FastifyInstance; url: string }> {
  const app = buildAdminApp(config, source)
  const url = await app.listen({ host: config.listen.host, port: config.listen.port })
  logger.info({ url }, 'admin API and dashboard listening')
  return { app, url }
}

/** The admin source of one process serving `gateway()` at `url`. */
export function localAdminSource(gateway: () => Gateway, url: string, reload: () => Promise<ReloadResult>): AdminSource {
  return { snapshot: () => snapshotOf(gateway(), url), reload }
}

/** In a worker: answers the primary's requests for this process's view. */
export function serveAdminSnapshots(gateway: () => Gateway, url: string): void {
  process.on('message', (message: unknown) => {
    const request = message as Partial<SnapshotRequest> | null
    if (request?.mcpEdgeAdmin !== 'snapshot' || typeof request.id !== 'number') return
    const id = request.id
    snapshotOf(gateway(), url).then(
      (snapshot) => process.send?.({ mcpEdgeAdmin: 'snapshot-reply', id, snapshot } satisfies SnapshotReply),
      (error: unknown) => process.send?.({ mcpEdgeAdmin: 'snapshot-reply', id, error: (error as Error).message } satisfies SnapshotReply),
    )
  })
}

let requestSeq = 0

function askWorker(worker: Worker): Promise<GatewaySnapshot | undefined> {
  const id = ++requestSeq
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(undefined), WORKER_SNAPSHOT_TIMEOUT_MS)
    const onMessage = (message: unknown): void => {
      const reply = message as Partial<SnapshotReply> | null
      if (reply?.mcpEdgeAdmin === 'snapshot-reply' && reply.id === id) finish(reply.snapshot)
    }
    const finish = (snapshot: GatewaySnapshot | undefined): void => {
      clearTimeout(timer)
      worker.off('message', onMessage)
      worker.off('exit', onExit)
      resolve(snapshot)
    }
    const onExit = (): void => finish(undefined)
    worker.on('message', onMessage)
    worker.once('exit', onExit)
    try {
      worker.send({ mcpEdgeAdmin: 'snapshot', id } satisfies SnapshotRequest)
    } catch {
      finish(undefined)
    }
  })
}

/** On the cluster primary: the whole gateway, merged from every listening worker's view. */
export function clusterAdminSource(reload: () => Promise<ReloadResult>): AdminSource {
  return {
    async snapshot() {
      const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && worker.isConnected())
      const parts = (await Promise.all(workers.map(askWorker))).filter((part): part is GatewaySnapshot => part !== undefined)
      if (parts.length === 0) throw new EdgeError('MCP_EDGE_ADMIN_NO_WORKER')
      return mergeSnapshots(parts)
    },
    reload,
  }
}
