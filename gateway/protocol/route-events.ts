/**
 * The route events a handler module listens to (`server.on('initialized', …)`): registered at setup,
 * emitted by the dispatcher. A listener runs after the current turn and its failure is logged, so
 * it never delays or breaks the request that emitted the event.
 */
import type { Logger } from 'pino'
import type { SessionView } from '../registry/context.ts'
import type { RouteEvent, RouteEventListener } from '../registry/route-server-api.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

export class RouteEvents {
  readonly #listeners = new Map<RouteEvent, Set<RouteEventListener>>()
  readonly #logger: Logger

  constructor(logger: Logger) {
    this.#logger = logger
  }

  /** Adds `listener` for `event`. */
  on(event: RouteEvent, listener: RouteEventListener): void {
    let listeners = this.#listeners.get(event)
    if (listeners === undefined) this.#listeners.set(event, (listeners = new Set()))
    listeners.add(listener)
  }

  /** Calls every listener of `event` with the session (made only when someone listens) and the params. */
  emit(event: RouteEvent, sessionId: string, session: () => SessionView, params: JsonObject): void {
    const listeners = this.#listeners.get(event)
    if (listeners === undefined) return
    const view = session()
    for (const listener of listeners) {
      Promise.resolve()
        .then(() => listener(view, params))
        .catch((error: unknown) => this.#logger.error({ err: error, event, sessionId }, 'route event listener failed'))
    }
  }
}
