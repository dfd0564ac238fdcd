/**
 * Stopping a gateway gracefully (a worker told to go, a single process on SIGTERM):
 *
 *   stop accepting ──► end SSE connections with a retry hint (clients resume elsewhere with
 *   Last-Event-ID) ──► wait for requests in flight, up to drain_timeout ──► close the rest
 *
 * Streams whose handler is still running when their connection ends keep going: their events reach
 * the log and the bus, so the worker where the client resumes forwards them.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { RECONNECT_DELAY_MS, detachAllStreams } from '../transport/sse.ts'
import type { Gateway } from './server.ts'

/**
 * How long a drain leaves idle keep-alive connections open. Closing one races with a client that sends
 * its next request on it at that moment (the request fails: a POST is not retried); a client that
 * sends one within this time gets its answer with `Connection: close` and closes the connection itself.
 */
const IDLE_GRACE_MS = 2000

/**
 * Requests this process is still working on: connections still open (each carries a response not yet
 * done, or is idle and not yet closed) and handlers still running. Counted at drain time only, so
 * serving a request costs nothing for it.
 */
async function inFlight(gateway: Gateway, server: Server, closeIdle: boolean): Promise<number> {
  if (closeIdle) server.closeIdleConnections()
  const connections = await new Promise<number>((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)))
  let handlers = 0
  for (const endpoint of gateway.endpoints.values()) {
    for (const [, live] of endpoint.live.entries()) handlers += live.inflight.size
  }
  return connections + handlers
}

/**
 * Stops the gateway gracefully: nothing new is accepted, SSE clients are told to reconnect, requests
 * in flight get up to `timeoutMs`; then whatever is left is closed. `server` is the socket that
 * listens (the app's own, or a single process's front server).
 */
export async function drainGateway(gateway: Gateway, timeoutMs: number, server: Server = gateway.app.server): Promise<void> {
  const started = Date.now()
  const deadline = started + timeoutMs
  const idleGraceMs = Math.min(IDLE_GRACE_MS, timeoutMs / 2)
  // Requests from now on are answered with `Connection: close`, so a client's next one opens a
  // connection elsewhere; connections still idle after the grace period are closed below.
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    response.shouldKeepAlive = false
  })
  // Not app.close() yet: it cuts every connection (forceCloseConnections), requests in flight included.
  server.close()
  const detached = detachAllStreams(RECONNECT_DELAY_MS)
  gateway.logger.info({ detached, inFlight: await inFlight(gateway, server, false), timeoutMs }, 'draining')
  // Shutdown only: a short poll is simpler than making every request report its end.
  while ((await inFlight(gateway, server, Date.now() - started >= idleGraceMs)) > 0 && Date.now() < deadline) await sleep(25)
  const left = await inFlight(gateway, server, true)
  if (left > 0) gateway.logger.warn({ inFlight: left }, 'drain timeout: closing what is left')
  detachAllStreams(RECONNECT_DELAY_MS)
  // Cutting a connection whose response just left can lose its tail: give the last ones a moment.
  await sleep(100)
  await gateway.close()
}
