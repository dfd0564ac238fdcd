/**
 * The listening socket of a single-process gateway, owned apart from its Fastify app, so that a
 * reload swaps the app under it without closing the port: no connection refused, no session lost
 * (the store outlives the app), requests in flight finish on the app that took them.
 *
 *   client ─► FrontServer (the port; timeouts, connections per address, client errors)
 *                 │ request ─► the current generation's Fastify handler
 *                 └ upgrade ─► the current generation's WebSocket server
 *
 * Each generation's Fastify app is built with `serverFactory: front.factory`: it gets a stand-in
 * server that never listens (its `upgrade` listeners are @fastify/websocket's), and the front hands
 * it traffic once `activate` says so. Closing an old app closes only its stand-in.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Logger } from 'pino'
import type { ConnectionsConfig } from '../config/types.ts'
import { capConnections, clientErrorHandler, serverTimeouts } from '../edge/connection-guard.ts'

interface Generation {
  readonly handle: RequestListener
  readonly standIn: Server
}

export class FrontServer {
  readonly server: Server
  /** Handlers Fastify gave stand-ins it has not been told to serve yet. */
  readonly #handlers = new WeakMap<Server, RequestListener>()
  #current: Generation | undefined

  constructor(connections: ConnectionsConfig, logger: Logger) {
    const { http, requestTimeout, keepAliveTimeout } = serverTimeouts(connections)
    this.server = createServer(http, (request: IncomingMessage, response: ServerResponse) => {
      // The host listens only after activating its first generation; nothing to answer with before.
      if (this.#current === undefined) {
        request.socket.destroy()
        return
      }
      this.#current.handle(request, response)
    })
    this.server.requestTimeout = requestTimeout
    this.server.keepAliveTimeout = keepAliveTimeout
    this.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (this.#current === undefined || this.#current.standIn.listenerCount('upgrade') === 0) {
        socket.destroy()
        return
      }
      this.#current.standIn.emit('upgrade', request, socket, head)
    })
    this.server.on('clientError', clientErrorHandler(logger))
    capConnections(this.server, connections, logger)
  }

  /** Fastify's `serverFactory`: a stand-in server that remembers the app's request handler. */
  readonly factory = (handler: RequestListener): Server => {
    const standIn = createServer()
    this.#handlers.set(standIn, handler)
    return standIn
  }

  /** From now on, new requests and upgrades go to the app whose stand-in this is. */
  activate(standIn: Server): void {
    const handle = this.#handlers.get(standIn)
    if (handle === undefined) throw new Error('activate: this server was not made by FrontServer.factory')
    this.#current = { handle, standIn }
  }
}
