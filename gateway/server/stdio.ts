/**
 * The stdio composition: one route served over stdin/stdout, one session, until stdin ends. Logs go
 * to stderr, since stdout carries JSON-RPC only.
 */
import { createLogger } from '../log/logger.ts'
import { startTracing, stopTracing } from '../protocol/tracing.ts'
import type { GatewayConfig, RouteConfig } from '../config/types.ts'
import { codecFromConfig } from '../protocol/stateless/request-state.ts'
import { MemoryStore } from '../store/memory.ts'
import { serveStdio } from '../transport/stdio.ts'
import { loadHandler } from './load-handler.ts'
import { buildEndpoint } from './route-endpoint.ts'
import { loadPhases } from '../phases/load-phases.ts'
import { CredentialContext } from '../upstream/credentials/context.ts'
import { CallEvents } from '../events/call-events.ts'
import { routeComponents } from '../events/route-components.ts'
import { AuditSink } from '../phases/audit-sink.ts'
import { subscribeLogPhase } from '../phases/log-phase.ts'

/** How long a stopping stdio server waits for cancelled requests before exiting anyway. */
const STOP_GRACE_MS = 1500

/** Thrown when the route cannot be served (its handler module fails to load or set up). */
export class StdioStartError extends Error {
  override readonly name = 'StdioStartError'
}

/**
 * Serves `route` on this process's stdin/stdout until stdin ends (or SIGTERM/SIGINT), then exits the
 * process shortly after, whatever a handler module left running. Throws StdioStartError when it cannot start.
 */
export async function serveRouteOverStdio(config: GatewayConfig, route: RouteConfig): Promise<void> {
  // stdout carries JSON-RPC only: logs, and whatever handler modules print, go to stderr.
  console.log = console.info = console.debug = console.error
  const logger = createLogger(config.log, { dest: 2, sync: true })
  // One session in one process: nothing to share with other workers, and nothing to replay.
  await startTracing(logger)
  const store = new MemoryStore({ eventCapacity: 1, cacheTtl: 1 })
  let endpoint
  const events = new CallEvents(0)
  let audit: AuditSink | undefined
  try {
    // Upstream tokens stay in this one process (no store to share them with); the signing keys are the config's.
    const credentials = new CredentialContext(logger, { upstream_identity: config.upstream_identity, token_encryption: config.token_encryption })
    const phases = await loadPhases(route)
    endpoint = await buildEndpoint(route, await loadHandler(route.handler), store, logger.child({ transport: 'stdio' }), codecFromConfig(config.request_state), undefined, credentials, phases)
    // The call events, as on HTTP and WebSocket: the route's log module and the audit record read them.
    endpoint.calls = events.route(route.location)
    endpoint.calls.source = routeComponents(endpoint)
    if (phases.log !== undefined) subscribeLogPhase(events, route.location, phases.log, endpoint.logger)
    if (config.audit !== undefined) {
      // stdout carries JSON-RPC only: an audit line there would be a message the client cannot parse.
      if ('fd' in config.audit && config.audit.fd === 1) throw new Error('audit.fd 1 is stdout, which carries the JSON-RPC messages over stdio: give audit.file, or another descriptor (2: stderr)')
      audit = new AuditSink(config.audit, config.log, [route])
      audit.attach(events)
    }
  } catch (error) {
    await audit?.close()
    await store.close()
    throw new StdioStartError(`cannot serve ${route.location}: ${(error as Error).message}`)
  }
  const server = serveStdio(endpoint, { input: process.stdin, output: process.stdout, maxMessageSize: config.body_limit, logger: endpoint.logger })
  const stop = (signal: string): void => {
    server.stop(signal)
    setTimeout(() => process.exit(0), STOP_GRACE_MS).unref()
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))
  await server.done
  endpoint.close()
  // The last calls' lines written before the process exits.
  await audit?.close()
  await store.close()
  await stopTracing()
  // Whatever a handler module left running (timers, sockets) must not keep the process alive.
  setTimeout(() => process.exit(), STOP_GRACE_MS).unref()
}
