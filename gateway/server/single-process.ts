/**
 * `mcp-edge start` as one process (`workers: 1`, a store of its own or Redis): a GatewayHost on the
 * port, reloaded without a restart on SIGHUP, `mcp-edge reload` or (with `--watch`) a changed file:
 *
 *   SIGHUP ──► `mcp-edge check` in a child ──fails──► log every problem (file and line); keep serving
 *                                      └─ok──► host.reload(): a new generation under the same port
 *          ──► the outcome written where `mcp-edge reload` reads it
 *   SIGTERM / SIGINT ──► drain ──► close the store ──► exit 0
 */
import type { Logger } from 'pino'
import { stopTracing } from '../protocol/tracing.ts'
import type { GatewayConfig } from '../config/types.ts'
import { launchHost } from './gateway-host.ts'
import { localAdminSource, startAdmin } from '../admin/admin-server.ts'
import { checkInChild, serializeReloads, watchForChanges, writePidFile } from './reload.ts'

export interface SingleProcessOptions {
  /** Reload when the config or a handler's folder changes (`--watch`). */
  watch?: boolean
  /** Applied to every config read, first and on reload (the CLI's PORT and HOST). */
  override?: (config: GatewayConfig) => void
}

/** Starts serving; resolves once the port listens. The process exits after SIGTERM or SIGINT. */
export async function runSingleProcess(config: GatewayConfig, options: SingleProcessOptions = {}): Promise<{ url: string; logger: Logger }> {
  const { host, store, logger, url } = await launchHost(config, options.override)
  // The stop handlers go in as soon as the port listens (and the listening line is out), before the
  // awaits below: a SIGTERM in between killed the process outright instead of draining it.
  let admin: Awaited<ReturnType<typeof startAdmin>> | undefined
  let stopWatching = (): void => undefined
  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    stopWatching()
    logger.info({ signal }, 'shutting down')
    host.drain(config.drain_timeout * 1000)
      .then(() => admin?.app.close())
      .then(() => store.close())
      .then(stopTracing)
      .then(() => process.exit(0), () => process.exit(1))
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))

  await writePidFile(config.file).catch((error: unknown) => logger.warn({ err: error }, 'cannot write the pid file: mcp-edge reload will not find this gateway'))

  const requestReload = serializeReloads(config.file, logger, async () => {
    const checked = await checkInChild(config.file)
    if (!checked.ok) {
      logger.error({ problems: checked.problems }, `reload refused, the gateway keeps serving what it served:\n${checked.problems.join('\n')}`)
      return checked
    }
    return host.reload()
  })
  process.on('SIGHUP', () => void requestReload('SIGHUP'))
  admin = config.admin === undefined ? undefined : await startAdmin(config.admin, localAdminSource(() => host.gateway, url, () => requestReload('POST /api/reload')), logger)
  if (stopping) void admin?.app.close()
  else if (options.watch === true) stopWatching = watchForChanges(config, (file) => requestReload(`changed: ${file}`), logger)

  return { url, logger }
}
