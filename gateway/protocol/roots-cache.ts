/**
 * The client's roots, kept per session on this worker so that `listRoots` asks the client once until
 * it says they changed (`notifications/roots/list_changed`, which clears the entry here and, over the
 * bus, on every other worker). Only for clients that declared `roots.listChanged`: another client
 * cannot tell us, so it is asked every time. At most `max` sessions (`limits.roots_cache`), the least
 * recently used dropped first.
 */
import type { ClientCapabilities, Root } from '../wire/mcp-types.ts'

export class RootsCache {
  // A Map keeps insertion order: re-inserting on use makes its first key the least recently used.
  readonly #entries = new Map<string, readonly Root[]>()
  readonly #max: number
  // Bumped by every clear: a load that started before a clear does not store what it read.
  #epoch = 0

  constructor(max: number) {
    this.#max = max
  }

  /** The session's roots from the cache, else from `load` (kept when the client can announce changes). */
  async get(sessionId: string, capabilities: ClientCapabilities, load: () => Promise<Root[]>): Promise<Root[]> {
    const cacheable = this.#max > 0 && capabilities.roots?.listChanged === true
    if (!cacheable) return load()
    const cached = this.#entries.get(sessionId)
    if (cached !== undefined) {
      this.#entries.delete(sessionId)
      this.#entries.set(sessionId, cached)
      return [...cached]
    }
    const epoch = this.#epoch
    const roots = await load()
    if (epoch === this.#epoch) {
      this.#entries.set(sessionId, roots)
      if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!)
    }
    return [...roots]
  }

  /** Forgets the session's roots (they changed, or the session ended). */
  clear(sessionId: string): void {
    this.#epoch++
    this.#entries.delete(sessionId)
  }

  /** How many sessions' roots are kept (for tests and /readyz-style reports). */
  get size(): number {
    return this.#entries.size
  }
}
