/**
 * The catalogues one route serves on this worker: the route's (setup plus its run-time overlay) and
 * each session's own (the route's plus the session's overlay), built from overlays kept in the store
 * (registry/catalogue.ts), so every worker and host shows the same lists and calls the same callbacks.
 *
 *   route change ──► CAS route doc ──► this view ──► bus {catalogue, version} ──► list_changed (route)
 *                                                     └► other workers: stale ──► next request re-reads (once)
 *   session change ──► CAS session doc ──► record.catalogue = version ──► list_changed (that session)
 *                                            └► every worker's record cache drops it ──► next request re-reads (once)
 *
 * The hot path pays nothing: a session without a catalogue of its own is served from the route's
 * view, and a view is re-read only after a change. list_changed goes out after the change is stored.
 */
import type { Logger } from 'pino'
import { applyChange, buildView, checkNew, listed, listsOf, parseOverlay, type CatalogueChange, type Overlay } from '../registry/catalogue.ts'
import type { ListName, Registry } from '../registry/registry.ts'
import type { DocOwner, SessionRecord, SessionStore, StoredDoc } from '../store/store.ts'
import { EdgeError } from '../wire/errors.ts'

/** Compare-and-set attempts before a change gives up (only many concurrent writers of one document lose that often). */
export const MAX_ATTEMPTS = 64
/** Session views kept per route and worker; the oldest is dropped beyond it (rebuilt from the store if needed). */
const MAX_SESSION_VIEWS = 1000
/** How often a worker re-reads the route's overlay in the background, in case a bus message was lost. */
const REFRESH_MS = 10_000

/** What the catalogues need of their endpoint. */
export interface CatalogueHost {
  readonly route: { readonly location: string; readonly limits: { readonly session_catalogue: number } }
  readonly store: SessionStore
  readonly logger: Logger
  /** Sends `notifications/<list>/list_changed` to every session of the route (when declared). */
  listChanged(list: ListName): void
  /** Sends it to one session. */
  sessionListChanged(sessionId: string, list: ListName): void
}

interface SessionView {
  /** The record's catalogue version this view is at least as new as. */
  readonly version: number
  /** The route view version it was built on. */
  readonly route: number
  readonly overlay: Overlay
  readonly view: Registry
}

export class Catalogues {
  /** What the handler's setup registered and declared: every view is built from it. */
  readonly setup: Registry
  readonly #host: CatalogueHost
  readonly #owner: DocOwner
  readonly #channel: string
  #route: Registry
  #routeVersion = 0
  /** False until the route's overlay was read once (another worker may have changed it before this one started). */
  #loaded = false
  /** A newer route version was announced: the next request re-reads it first. */
  #stale = false
  #reading: Promise<void> | undefined
  readonly #sessions = new Map<string, SessionView>()
  #timer: NodeJS.Timeout | undefined
  #unsubscribe: (() => void) | undefined

  constructor(host: CatalogueHost, setup: Registry) {
    this.#host = host
    this.setup = setup
    this.#route = setup
    this.#owner = { route: host.route.location, name: 'catalogue' }
    this.#channel = `route:${host.route.location}`
  }

  /** The route's catalogue now (what a session without one of its own sees). */
  get route(): Registry {
    return this.#route
  }

  /** Setup is over: follow the route's changes from now on. */
  start(): void {
    this.#unsubscribe = this.#host.store.bus.subscribe(this.#channel, (message) => {
      if (message.type === 'catalogue' && message.version > this.#routeVersion) this.#stale = true
    })
    this.#timer = setInterval(() => void this.#readRoute().catch(() => undefined), REFRESH_MS)
    this.#timer.unref()
  }

  close(): void {
    clearInterval(this.#timer)
    this.#unsubscribe?.()
  }

  /**
   * undefined when the views a request of `record` needs are at hand (the hot path); otherwise a
   * promise that reads what changed (once, shared by the requests that wait for it).
   */
  ready(record: SessionRecord | undefined): Promise<void> | undefined {
    if (!this.#loaded || this.#stale) return (this.#reading ??= this.#readRoute().finally(() => (this.#reading = undefined))).then(() => this.ready(record))
    if (record?.catalogue === undefined) return undefined
    const cached = this.#sessions.get(record.id)
    if (cached === undefined || cached.version < record.catalogue) return this.#readSession(record.id, record.catalogue)
    if (cached.route !== this.#routeVersion) this.#keep(record.id, { ...cached, route: this.#routeVersion, view: buildView(this.setup, this.#route, cached.overlay) })
    return undefined
  }

  /** The catalogue `record`'s session sees (after `ready`). */
  viewOf(record: SessionRecord): Registry {
    if (record.catalogue === undefined) return this.#route
    return this.#sessions.get(record.id)?.view ?? this.#route
  }

  /** Makes a route-wide change on every worker; false for an unregister of what was not listed (nothing changes). */
  async changeRoute(change: CatalogueChange): Promise<boolean> {
    const { store } = this.#host
    for (let attempt = 1; ; attempt++) {
      const doc = await store.readDoc(this.#owner)
      const overlay = parseOverlay(doc?.value)
      const view = buildView(this.setup, this.setup, overlay)
      checkNew(view, change, 'this route')
      if (change.op === 'unregister' && !listed(view, change.key)) return false
      const next = applyChange(overlay, change)
      const written = await store.writeDoc(this.#owner, doc?.version ?? 0, JSON.stringify(next))
      if (written === 'conflict' || written === 'gone') {
        if (attempt >= MAX_ATTEMPTS) throw new EdgeError('MCP_EDGE_STORE_CONFLICT')
        continue
      }
      this.#setRoute(written.version, next)
      // On the route channel, before the list_changed that follows: a worker hears "stale" first.
      await store.bus.publish(this.#channel, { type: 'catalogue', version: written.version })
      for (const list of listsOf(change)) this.#host.listChanged(list)
      return true
    }
  }

  /** Changes one session's own catalogue, seen by that session on every worker; false as for `changeRoute`. */
  async changeSession(sessionId: string, change: CatalogueChange): Promise<boolean> {
    const { store, route } = this.#host
    const owner: DocOwner = { session: sessionId, name: 'catalogue' }
    for (let attempt = 1; ; attempt++) {
      await this.ready(undefined)
      const doc = await store.readDoc(owner)
      const overlay = parseOverlay(doc?.value)
      const view = buildView(this.setup, this.#route, overlay)
      checkNew(view, change, 'this session')
      if (change.op === 'unregister' && !listed(view, change.key)) return false
      const next = applyChange(overlay, change)
      const json = JSON.stringify(next)
      const bytes = Buffer.byteLength(json)
      if (bytes > route.limits.session_catalogue) {
        throw new EdgeError('MCP_EDGE_SESSION_DATA_TOO_LARGE', `this session's catalogue would be ${bytes} bytes; a session keeps at most ${route.limits.session_catalogue} (limits.session_catalogue)`)
      }
      const written = await store.writeDoc(owner, doc?.version ?? 0, json)
      if (written === 'gone') throw new EdgeError('MCP_EDGE_SESSION_NOT_FOUND')
      if (written === 'conflict') {
        if (attempt >= MAX_ATTEMPTS) throw new EdgeError('MCP_EDGE_STORE_CONFLICT')
        continue
      }
      this.#keep(sessionId, { version: written.version, route: this.#routeVersion, overlay: next, view: buildView(this.setup, this.#route, next) })
      // The record change reaches every worker's cache: their next request of the session re-reads the view.
      if ((await store.update(sessionId, { catalogue: written.version })) === undefined) throw new EdgeError('MCP_EDGE_SESSION_NOT_FOUND')
      for (const list of listsOf(change)) this.#host.sessionListChanged(sessionId, list)
      return true
    }
  }

  async #readRoute(): Promise<void> {
    const doc = await this.#host.store.readDoc(this.#owner)
    this.#loaded = true
    this.#stale = false
    if (doc !== undefined && doc.version > this.#routeVersion) this.#setRoute(doc.version, parseOverlay(doc.value))
  }

  async #readSession(sessionId: string, atLeast: number): Promise<void> {
    const doc: StoredDoc | undefined = await this.#host.store.readDoc({ session: sessionId, name: 'catalogue' })
    const overlay = parseOverlay(doc?.value)
    // The record may name an older version than the document (two changes raced); never a newer one.
    this.#keep(sessionId, { version: Math.max(atLeast, doc?.version ?? 0), route: this.#routeVersion, overlay, view: buildView(this.setup, this.#route, overlay) })
  }

  #setRoute(version: number, overlay: Overlay): void {
    if (version <= this.#routeVersion) return
    this.#routeVersion = version
    this.#route = buildView(this.setup, this.setup, overlay)
  }

  #keep(sessionId: string, view: SessionView): void {
    this.#sessions.delete(sessionId)
    if (this.#sessions.size >= MAX_SESSION_VIEWS) this.#sessions.delete(this.#sessions.keys().next().value as string)
    this.#sessions.set(sessionId, view)
  }
}
