/**
 * Delivers what belongs to a session but to no request: resources/updated, list_changed, logs
 * outside a request, and the client's answers and cancellations that must reach the worker holding
 * the request. Local first; what this worker does not hold goes over the store's bus to the worker
 * that does. Nothing polls: the bus pushes.
 *
 *   notifySession(id, msg) ──► local outlet? ──yes──► outlet.send
 *                                   │ no
 *                                   ▼
 *                              bus.publish(route channel) ──► other workers: local outlet? ──► send
 */
import type { Logger } from 'pino'
import type { BusMessage, RouteBusMessage } from '../store/bus-message.ts'
import type { Bus, SessionStore } from '../store/store.ts'
import { ClientAnswerError } from '../wire/errors.ts'
import type { JsonRpcMessage, JsonRpcResponse, RequestId } from '../wire/jsonrpc.ts'
import { notification } from '../wire/jsonrpc.ts'
import type { LiveSessions } from './live-sessions.ts'
import { STANDALONE_STREAM } from './sink.ts'
import { ListenRegistry } from './stateless/listen.ts'
import type { LogLevel } from '../wire/mcp-types.ts'
import { levelPasses } from './request-context.ts'
import { RootsCache } from './roots-cache.ts'

export class Notifier {
  /** This worker's subscriptions/listen streams of the route (stateless clients). */
  readonly listeners = new ListenRegistry()
  /** The sessions' roots this worker keeps; cleared here and on every worker when they change. */
  readonly roots: RootsCache
  readonly #channel: string
  readonly #bus: Bus
  readonly #store: SessionStore
  readonly #live: LiveSessions
  readonly #logger: Logger
  readonly #unsubscribe: () => void
  readonly #resumable: boolean
  // Per notifier, not per process: two generations of a route during a reload, or two gateways on
  // one store in a test, are two parties of the bus, each holding its own sessions.
  readonly #tag = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`

  constructor(location: string, resumable: boolean, store: SessionStore, live: LiveSessions, logger: Logger, rootsCache: number) {
    this.roots = new RootsCache(rootsCache)
    this.#channel = `route:${location}`
    this.#resumable = resumable
    this.#bus = store.bus
    this.#store = store
    this.#live = live
    this.#logger = logger
    this.#unsubscribe = this.#bus.subscribe(this.#channel, (message) => this.#fromBus(message))
  }

  /**
   * Sends a message on the session's standalone stream, wherever it is held. With resumability, a
   * message for a stream this worker does not hold is logged here first, so it reaches a client that
   * resumes later even when no worker holds the stream right now.
   */
  notifySession(sessionId: string, message: JsonRpcMessage): void {
    const outlet = this.#live.get(sessionId)?.outlet
    if (outlet !== undefined) {
      outlet.send(message)
      return
    }
    if (!this.#resumable) {
      this.#publish({ type: 'notify', session: sessionId, message })
      return
    }
    const data = JSON.stringify(message)
    this.#store.append(sessionId, STANDALONE_STREAM, data).then(
      (eventId) => {
        const opened = this.#live.get(sessionId)?.outlet
        if (opened !== undefined) opened.sendLogged(data, eventId)
        else this.#publish({ type: 'logged', session: sessionId, data, eventId })
      },
      (error: unknown) => this.#logger.warn({ err: error, sessionId }, 'cannot log a standalone-stream event'),
    )
  }

  /**
   * Sends a message on the session's outlet wherever it is held, never logged: the outlet is a
   * 2024-11-05 HTTP+SSE stream, which cannot be resumed. Dropped when no worker holds one.
   */
  toOutlet(sessionId: string, message: JsonRpcMessage): void {
    const outlet = this.#live.get(sessionId)?.outlet
    if (outlet !== undefined) outlet.send(message)
    else this.#publish({ type: 'notify', session: sessionId, message })
  }

  /** Sends a message to every open standalone stream of the route, on every worker. */
  notifyRoute(message: JsonRpcMessage, minimumLevel?: LogLevel): void {
    void this.#deliverToRoute(message, minimumLevel)
    this.#publish({ type: 'route', message, level: minimumLevel })
  }

  /** Tells every worker's listen streams that subscribed to `uri` that it changed. */
  resourceUpdated(uri: string): void {
    this.listeners.deliver(notification('notifications/resources/updated', { uri }))
    this.#publish({ type: 'resource', uri })
  }

  /** Cancels a request wherever it runs. */
  cancel(sessionId: string, requestId: RequestId, reason: string): void {
    const request = this.#live.get(sessionId)?.inflight.get(requestId)
    if (request !== undefined) request.cancel(reason)
    else this.#publish({ type: 'cancel', session: sessionId, requestId, reason })
  }

  /** Hands the client's answer to the server→client request it belongs to, wherever it waits. */
  answer(sessionId: string, response: JsonRpcResponse): void {
    if (!this.#answerLocally(sessionId, response)) this.#publish({ type: 'answer', session: sessionId, response })
  }

  /** Forwards the client's progress on a server→client request to where it waits. */
  progress(sessionId: string, token: string, progress: number, total?: number, message?: string): void {
    const awaiting = this.#live.get(sessionId)?.awaiting.get(token)
    if (awaiting !== undefined) awaiting.progress(progress, total, message)
    else this.#publish({ type: 'progress', session: sessionId, token, progress, total, message })
  }

  /** The client's roots changed: every worker forgets those it kept. */
  rootsChanged(sessionId: string): void {
    this.roots.clear(sessionId)
    this.#publish({ type: 'roots', session: sessionId })
  }

  /** Ends what every worker holds for a deleted session. */
  ended(sessionId: string): void {
    this.roots.clear(sessionId)
    this.#live.end(sessionId)
    this.#publish({ type: 'ended', session: sessionId })
  }

  close(): void {
    this.#unsubscribe()
  }

  #answerLocally(sessionId: string, response: JsonRpcResponse): boolean {
    const awaiting = this.#live.get(sessionId)?.awaiting.get(String(response.id))
    if (awaiting === undefined) return false
    if ('result' in response) awaiting.resolve(response.result)
    else awaiting.reject(new ClientAnswerError(response.error.code, response.error.message, response.error.data))
    return true
  }

  async #deliverToRoute(message: JsonRpcMessage, minimumLevel: LogLevel | undefined): Promise<void> {
    if (minimumLevel === undefined && 'method' in message && !('id' in message)) this.listeners.deliver(message)
    for (const [id, live] of this.#live.entries()) {
      if (live.outlet === undefined) continue
      if (minimumLevel !== undefined) {
        const record = await this.#store.get(id)
        if (record === undefined || !levelPasses(minimumLevel, record.logLevel)) continue
      }
      live.outlet?.send(message)
    }
  }

  #publish(message: RouteBusMessage): void {
    message.from = this.#tag
    this.#bus.publish(this.#channel, message).catch((error: unknown) => {
      this.#logger.warn({ err: error, type: message.type }, 'bus publish failed')
    })
  }

  /** What another worker asks this one to do; messages this worker published are ignored. */
  #fromBus(message: BusMessage): void {
    if ('from' in message && message.from === this.#tag) return
    switch (message.type) {
      case 'notify':
        this.#live.get(message.session)?.outlet?.send(message.message)
        break
      case 'logged':
        this.#live.get(message.session)?.outlet?.sendLogged(message.data, message.eventId)
        break
      case 'route':
        void this.#deliverToRoute(message.message, message.level)
        break
      case 'cancel':
        this.#live.get(message.session)?.inflight.get(message.requestId)?.cancel(message.reason)
        break
      case 'answer':
        this.#answerLocally(message.session, message.response)
        break
      case 'progress':
        this.#live.get(message.session)?.awaiting.get(message.token)?.progress(message.progress, message.total, message.message)
        break
      case 'resource':
        this.listeners.deliver(notification('notifications/resources/updated', { uri: message.uri }))
        break
      case 'roots':
        this.roots.clear(message.session)
        break
      case 'ended':
        this.roots.clear(message.session)
        this.#live.end(message.session)
        break
    }
  }
}
