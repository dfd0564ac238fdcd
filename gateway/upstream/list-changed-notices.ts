/**
 * A proxy route's list_changed notifications: an upstream's list changed, or an upstream became
 * available or went away. Its cached lists go (on every worker and host), and the route's sessions
 * hear it once for changes close together.
 */
import type { Logger } from 'pino'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { ListCache } from './list-cache.ts'

/** Changes this close together make one set of list_changed notifications. */
const COALESCE_MS = 100

type ListName = 'tools' | 'prompts' | 'resources'

export class ListChangedNotices {
  readonly #endpoint: McpEndpoint
  readonly #listCache: ListCache | undefined
  readonly #logger: Logger
  #availabilityTimer: NodeJS.Timeout | undefined
  /** Upstream list changes waiting to be applied. */
  readonly #changedLists = new Set<string>()

  constructor(endpoint: McpEndpoint, listCache: ListCache | undefined, logger: Logger) {
    this.#endpoint = endpoint
    this.#listCache = listCache
    this.#logger = logger
  }

  /**
   * An upstream said its list changed, on one of its sessions: since every session of the route
   * listed from its cached lists, every session hears it.
   */
  upstreamListChanged(upstream: string, list: ListName): void {
    // Each of the upstream's sessions with this worker hears the same change: one drop and one notification for all.
    const key = `${upstream}\0${list}`
    if (this.#changedLists.has(key)) return
    this.#changedLists.add(key)
    const timer = setTimeout(() => {
      this.#changedLists.delete(key)
      this.#listCache?.invalidate(upstream).then(() => this.#endpoint.listChanged(list), (error: unknown) => this.#dropFailed(error, upstream))
    }, COALESCE_MS)
    timer.unref()
  }

  /** An upstream became available or went away: every list may have changed. */
  availabilityChanged(upstream: string): void {
    // What it listed before it went away (or before it came back, perhaps a newer version) is not trusted.
    this.#listCache?.invalidate(upstream).catch((error: unknown) => this.#dropFailed(error, upstream))
    if (this.#availabilityTimer !== undefined) return
    this.#availabilityTimer = setTimeout(() => {
      this.#availabilityTimer = undefined
      for (const list of ['tools', 'prompts', 'resources'] as const) this.#endpoint.listChanged(list)
    }, COALESCE_MS)
    this.#availabilityTimer.unref()
  }

  close(): void {
    clearTimeout(this.#availabilityTimer)
  }

  #dropFailed(error: unknown, upstream: string): void {
    this.#logger.warn({ err: error, upstream }, 'list cache: could not drop an upstream\'s lists')
  }
}
