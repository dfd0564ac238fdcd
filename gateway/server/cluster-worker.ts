/**
 * One worker under the cluster primary (cluster.ts): serves the gateway on the shared port through a
 * GatewayHost, loads a new generation when the primary says `reload` (after its check), and, when
 * told to stop (the primary's `drain`, SIGTERM, SIGINT, or the primary going away), drains (drain.ts)
 * and exits 0.
 */
import type { GatewayConfig } from '../config/types.ts'
import { stopTracing } from '../protocol/tracing.ts'
import { launchHost } from './gateway-host.ts'
import { serveAdminSnapshots } from '../admin/admin-server.ts'

/** What the primary and a worker tell each other, besides the store's traffic. */
export type ClusterSignal =
  | { mcpEdgeCluster: 'drain' }
  | { mcpEdgeCluster: 'fatal'; reason: string }
  /** The primary checked the new config: load it and the handler modules as a new generation. */
  | { mcpEdgeCluster: 'reload' }
  | { mcpEdgeCluster: 'reloaded'; ok: boolean; problems: string[]; detail?: string }

export function isClusterSignal(message: unknown): message is ClusterSignal {
  return typeof message === 'object' && message !== null && 'mcpEdgeCluster' in message
}

/** Runs this process as a cluster worker; resolves once it listens. The process exits after a drain. */
export async function runWorker(config: GatewayConfig): Promise<void> {
  process.on('uncaughtException', (error) => {
    // Say why before dying, so the primary's log line has the reason.
    process.send?.({ mcpEdgeCluster: 'fatal', reason: error.stack ?? error.message } satisfies ClusterSignal)
    process.stderr.write(`${error.stack ?? error.message}\n`)
    process.exit(1)
  })
  const { host, store, logger, url } = await launchHost(config, overrideListen)
  logger.info({ url, config: config.file, routes: config.routes.map((route) => route.location) }, 'mcp-edge listening')
  // The primary's admin listener asks each worker for its view.
  if (config.admin !== undefined) serveAdminSnapshots(() => host.gateway, url)

  let draining: Promise<void> | undefined
  const drain = (why: string): void => {
    if (draining !== undefined) return
    logger.info({ why }, 'worker stopping')
    draining = host.drain(config.drain_timeout * 1000).then(() => store.close()).then(stopTracing).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'drain failed')
        process.exit(1)
      },
    )
  }
  process.on('message', (message) => {
    if (!isClusterSignal(message)) return
    if (message.mcpEdgeCluster === 'drain') drain('asked by the primary')
    if (message.mcpEdgeCluster === 'reload') {
      void host.reload().then((outcome) => process.send?.({ mcpEdgeCluster: 'reloaded', ...outcome } satisfies ClusterSignal))
    }
  })
  process.once('SIGTERM', () => drain('SIGTERM'))
  process.once('SIGINT', () => drain('SIGINT'))
  process.once('disconnect', () => drain('the primary is gone'))
}

/** The CLI's PORT and HOST, applied again to a reloaded config (the primary's environment is ours). */
function overrideListen(config: GatewayConfig): void {
  if (process.env.PORT !== undefined) config.listen.port = Number(process.env.PORT)
  if (process.env.HOST !== undefined) config.listen.host = process.env.HOST
}
