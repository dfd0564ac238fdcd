/**
 * The cache table in this process's memory: the memory store's, and the cluster primary's (which
 * serves it to its workers over IPC). Maps keep insertion order, so the oldest entry of a route, of
 * a principal or of all is the first of its map: eviction costs no search. Expired entries are
 * dropped when met and by a periodic sweep.
 */
import { entryBytes, type CacheBounds, type CacheRead, type CacheTable, type CacheWrite } from './cache-table.ts'

interface Slot {
  readonly value: string
  readonly bytes: number
  readonly expiresAt: number
  readonly route: string
  readonly group: string
  readonly principal: string | undefined
}

const SWEEP_MS = 30_000

export class MemoryCacheTable implements CacheTable {
  /** Every entry, oldest write first. */
  readonly #entries = new Map<string, Slot>()
  readonly #byRoute = new Map<string, { bytes: number; keys: Set<string> }>()
  readonly #byPrincipal = new Map<string, Set<string>>()
  readonly #byGroup = new Map<string, Set<string>>()
  /** Per group; groups are named by config (route, upstream, tool), never by a client, so this stays small. */
  readonly #generations = new Map<string, number>()
  #bytes = 0
  readonly #sweeper: NodeJS.Timeout

  constructor() {
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_MS)
    this.#sweeper.unref()
  }

  async read(keys: readonly string[], groups: readonly string[]): Promise<CacheRead> {
    return this.readNow(keys, groups)
  }

  /** `read` without a promise, for the cluster primary. */
  readNow(keys: readonly string[], groups: readonly string[]): CacheRead {
    const now = Date.now()
    const values = keys.map((key) => {
      const slot = this.#entries.get(key)
      if (slot === undefined) return undefined
      if (slot.expiresAt > now) return slot.value
      this.#remove(key, slot)
      return undefined
    })
    return { values, generations: groups.map((group) => this.#generations.get(group) ?? 0) }
  }

  async write(entry: CacheWrite, generation: number, bounds: CacheBounds): Promise<boolean> {
    return this.writeNow(entry, generation, bounds)
  }

  /** `write` without a promise, for the cluster primary. */
  writeNow(entry: CacheWrite, generation: number, bounds: CacheBounds): boolean {
    if ((this.#generations.get(entry.group) ?? 0) !== generation) return false
    const bytes = entryBytes(entry.key, entry.value)
    if (bytes > bounds.routeBytes || bytes > bounds.totalBytes || bounds.principalEntries < 1) return false
    const previous = this.#entries.get(entry.key)
    if (previous !== undefined) this.#remove(entry.key, previous)
    const route = this.#byRoute.get(entry.route)
    while (route !== undefined && route.bytes + bytes > bounds.routeBytes) this.#evictFirst(route.keys)
    while (this.#bytes + bytes > bounds.totalBytes) this.#evictFirst(this.#entries.keys())
    if (entry.principal !== undefined) {
      const owned = this.#byPrincipal.get(entry.principal)
      while (owned !== undefined && owned.size >= bounds.principalEntries) this.#evictFirst(owned)
    }
    const slot: Slot = { value: entry.value, bytes, expiresAt: Date.now() + entry.ttlMs, route: entry.route, group: entry.group, principal: entry.principal }
    this.#entries.set(entry.key, slot)
    this.#bytes += bytes
    let routeIndex = this.#byRoute.get(entry.route)
    if (routeIndex === undefined) this.#byRoute.set(entry.route, (routeIndex = { bytes: 0, keys: new Set() }))
    routeIndex.bytes += bytes
    routeIndex.keys.add(entry.key)
    indexed(this.#byGroup, entry.group).add(entry.key)
    if (entry.principal !== undefined) indexed(this.#byPrincipal, entry.principal).add(entry.key)
    return true
  }

  async drop(group: string): Promise<void> {
    this.dropNow(group)
  }

  /** `drop` without a promise, for the cluster primary. */
  dropNow(group: string): void {
    this.#generations.set(group, (this.#generations.get(group) ?? 0) + 1)
    for (const key of [...(this.#byGroup.get(group) ?? [])]) this.#remove(key, this.#entries.get(key)!)
  }

  async usage(route: string): Promise<{ route: number; total: number; entries: number }> {
    return this.usageNow(route)
  }

  usageNow(route: string): { route: number; total: number; entries: number } {
    return { route: this.#byRoute.get(route)?.bytes ?? 0, total: this.#bytes, entries: this.#entries.size }
  }

  close(): void {
    clearInterval(this.#sweeper)
    this.#entries.clear()
    this.#byRoute.clear()
    this.#byPrincipal.clear()
    this.#byGroup.clear()
    this.#bytes = 0
  }

  #evictFirst(keys: Iterable<string>): void {
    for (const key of keys) {
      this.#remove(key, this.#entries.get(key)!)
      return
    }
  }

  #remove(key: string, slot: Slot): void {
    this.#entries.delete(key)
    this.#bytes -= slot.bytes
    const route = this.#byRoute.get(slot.route)
    if (route !== undefined) {
      route.bytes -= slot.bytes
      route.keys.delete(key)
      if (route.keys.size === 0) this.#byRoute.delete(slot.route)
    }
    unindex(this.#byGroup, slot.group, key)
    if (slot.principal !== undefined) unindex(this.#byPrincipal, slot.principal, key)
  }

  #sweep(): void {
    const now = Date.now()
    for (const [key, slot] of this.#entries) if (slot.expiresAt <= now) this.#remove(key, slot)
  }
}

function indexed(index: Map<string, Set<string>>, name: string): Set<string> {
  let keys = index.get(name)
  if (keys === undefined) index.set(name, (keys = new Set()))
  return keys
}

function unindex(index: Map<string, Set<string>>, name: string, key: string): void {
  const keys = index.get(name)
  keys?.delete(key)
  if (keys?.size === 0) index.delete(name)
}
