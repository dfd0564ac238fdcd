/**
 * The children of one stdio upstream on one worker, and which session talks to which.
 *
 *   isolation: shared     one group; a new session goes to a new child while every child has a
 *                         session and fewer than pool.max run, else to the least loaded child
 *   isolation: principal  a group per principal, one child each (pool.max children in all)
 *   isolation: session    a group per session, one child each, initialized with that session's
 *                         own initialize (its capabilities); stopped when the session closes
 *
 * Children start lazily (pool.min of them stay up in `shared`; `warm` starts one when the gateway
 * starts), are stopped after idle_timeout without traffic, and a child that crashes, hangs or fails
 * to start makes its group wait before the next start: 100 ms, doubling to 10 s (reset once a child
 * has run 10 s). A crashed `shared` child that served sessions is restarted once the wait is over,
 * and a request that finds no child waits for a restart due within RESTART_WAIT_MS rather than
 * failing. Every stop kills the child's whole process group. The children belong to this worker: a
 * session served by another worker gets a child from that worker's pool.
 *
 * `onavailability` hears when the upstream becomes available (a child is ready) and when it is not
 * (the last ready child crashed, or a start failed): the route's health follows it, so /readyz and
 * the route's list_changed signal see a stdio upstream come and go like any other.
 */
import type { Logger } from 'pino'
import { TransportError } from '../client/errors.ts'
import type { Transport } from '../client/transport.ts'
import type { Implementation, JsonObject } from '../wire/mcp-types.ts'
import { PoolChild } from './stdio-pool-child.ts'
import type { StdioUpstreamConfig } from './stdio-pool-config.ts'
import { ModernChannel, type ModernOptions } from './stdio-pool-modern.ts'
import { StdioPoolTransport, type PoolHost, type StdioPoolKey } from './stdio-pool-transport.ts'
import { DEFAULT_BACKOFF, failed, groupKey, leastLoaded, newGroup, sharedHandshake, type Group, type StdioBackoff } from './stdio-pool-group.ts'
import { launchIn, removeFolder } from './stdio-pool-state.ts'

export type { StdioPoolKey } from './stdio-pool-transport.ts'
export type { StdioBackoff } from './stdio-pool-group.ts'

export interface StdioPoolOptions {
  log: Logger
  /** Default: 100 ms doubling to 10 s, reset after 10 s of good run. */
  backoff?: StdioBackoff
  /** Milliseconds between closing stdin, SIGTERM and SIGKILL when a child is stopped; default 2000. */
  graceMs?: number
  /** Milliseconds a new child is ready before sessions move to it from a busier one (default SETTLE_MS). */
  settleMs?: number
  /** Who the pool says it is in the handshakes it makes (`shared`, `principal`). */
  clientInfo?: Implementation
}

/** The upstream became available (`reason` undefined) or unavailable (why, fit for /readyz). */
export type AvailabilityListener = (available: boolean, reason: string | undefined) => void

/** A request that finds its group waiting to restart waits this long at most; a longer wait is refused at once. */
export const RESTART_WAIT_MS = 1000

/**
 * How long a new `shared` child is ready before sessions move to it from a busier child. A server
 * finishes starting after its initialize: server-filesystem asks for roots then and applies them in
 * its own time, refusing every path until it has. A session moved at once could be refused what its
 * old child served a moment before (seen under load in test/upstream/stdio-roots.test.ts).
 */
export const SETTLE_MS = 2000

/** One child as `status()` reports it. */
export interface StdioChildStatus {
  pid: number | undefined
  state: PoolChild['state']
  sessions: number
  /** The downstream sessions it serves (for tests: never shown on /readyz, a session id is a credential). */
  sessionIds: string[]
  requestsInFlight: number
}

/** The pool of one stdio upstream on this worker; `transportFor` is the seam the proxy uses. */
export class StdioPool implements PoolHost {
  readonly name: string
  /** Children that died unexpectedly (each is replaced, with backoff), for the metrics. */
  restarts = 0
  readonly config: StdioUpstreamConfig
  readonly #log: Logger
  readonly #backoff: StdioBackoff
  readonly #graceMs: number
  readonly #settleMs: number
  readonly #clientInfo: Implementation
  readonly #groups = new Map<string, Group>()
  /** Started transports not yet closed: the pool's close ends them. */
  readonly #open = new Set<StdioPoolTransport>()
  #running = 0
  #nextSession = 0
  #closed = false
  /** Told when the upstream becomes available or unavailable on this worker. */
  onavailability?: AvailabilityListener
  /** Children that became ready so far (see PoolHost.generation). */
  generation = 0
  /** 2026-07-28 requests, on a child of their own (stdio-pool-modern.ts). */
  readonly #modern: ModernChannel

  constructor(config: StdioUpstreamConfig, options: StdioPoolOptions) {
    this.name = config.name
    this.config = config
    this.#log = options.log.child({ upstream: config.name })
    this.#backoff = options.backoff ?? DEFAULT_BACKOFF
    this.#graceMs = options.graceMs ?? 2000
    this.#settleMs = options.settleMs ?? SETTLE_MS
    this.#clientInfo = options.clientInfo ?? { name: 'mcp-edge', version: '0.1.0' }
    this.#modern = new ModernChannel({
      name: this.name,
      config,
      log: this.#log,
      graceMs: this.#graceMs,
      reserve: () => {
        if (this.#closed || this.#running >= this.config.pool.max) return false
        this.#running++
        return true
      },
      free: () => void this.#running--,
    })
  }

  /** True when the upstream takes 2026-07-28 requests as they are (its discover lists that revision; `shared` only). */
  speaksStateless(timeoutMs: number): boolean | Promise<boolean> {
    return this.#modern.speaks(timeoutMs)
  }

  /** One 2026-07-28 request, passed to the server as it came; its answer as the server gave it. */
  statelessRequest(method: string, params: JsonObject, options: ModernOptions): Promise<JsonObject> {
    return this.#modern.request(method, params, options)
  }

  /** A connection for one downstream session; nothing starts until its client sends initialize. */
  transportFor(key: StdioPoolKey): Transport & StdioPoolTransport {
    return new StdioPoolTransport(this, key)
  }

  /**
   * Starts pool.min children now (`shared`; at least one), rather than on first use: the gateway
   * calls it at start, so a child that takes long to start (`npx -y` installing) is ready, or on
   * its way, before the first list. Rejects when a child cannot start (the restart goes on).
   */
  async warm(): Promise<void> {
    if (this.config.isolation !== 'shared' || this.#closed) return
    const group = this.#group('*')
    const want = Math.max(this.config.pool.min, 1)
    while (group.children.length < want && this.#running < this.config.pool.max) this.#spawn(group)
    await Promise.all(group.children.map((child) => child.ready))
  }

  /** The children running now, for tests. */
  status(): StdioChildStatus[] {
    const children: StdioChildStatus[] = []
    for (const group of this.#groups.values()) {
      for (const child of group.children) {
        const sessionIds = [...child.sessions].map((session) => (session as StdioPoolTransport).key.session)
        children.push({ pid: child.pid, state: child.state, sessions: child.sessions.size, sessionIds, requestsInFlight: child.requestsInFlight })
      }
    }
    return children
  }

  /** Ends every session (their transports close) and stops every child, process groups included. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    const stopping: Promise<void>[] = []
    for (const session of this.#open) session.end()
    this.#open.clear()
    stopping.push(this.#modern.close())
    for (const group of this.#groups.values()) {
      clearTimeout(group.restartTimer)
      const stopped = Promise.all([...group.children].map((child) => child.stop('the pool closed')))
      stopping.push(stopped.then(noop))
      // A session's state ends with its child; a principal's is kept.
      if (group.stateFolder !== undefined && this.config.isolation === 'session') stopping.push(this.#removeFolder(group.stateFolder, stopped))
    }
    this.#groups.clear()
    await Promise.all(stopping)
  }

  opened(session: StdioPoolTransport): void {
    if (this.#closed) session.end()
    else this.#open.add(session)
  }

  async acquire(session: StdioPoolTransport, initialize?: JsonObject): Promise<PoolChild> {
    if (this.#closed) throw new TransportError(`${this.name}: the upstream pool is closed`)
    const group = this.#groupOf(session)
    if (this.config.isolation === 'session') group.handshake ??= initialize ?? session.key.initialize
    let child = session.child
    while (child === undefined || child.state === 'gone') {
      const chosen = this.#choose(group)
      if (typeof chosen === 'number') {
        // A restart due soon: wait for it rather than fail the request.
        await delay(chosen)
        if (this.#closed) throw new TransportError(`${this.name}: the upstream pool is closed`)
        child = session.child
        continue
      }
      child = chosen
      child.attach(session)
      session.child = child
      session.generation = this.generation
    }
    await child.ready
    return child
  }

  /**
   * Sessions are placed when they start, on a ready child while others start: once those are ready
   * and settled (SETTLE_MS), a session with nothing under way on its child moves to one with at least
   * two sessions fewer.
   */
  rebalance(session: StdioPoolTransport): void {
    const current = session.child
    if (this.config.isolation !== 'shared' || current === undefined || current.state !== 'ready') {
      session.generation = this.generation
      return
    }
    const target = leastLoaded(this.#group('*').children, 'ready')
    // Not settled yet: the session stays where it is, and asks again on its next request.
    if (target !== undefined && target !== current && Date.now() - target.readySince < this.#settleMs) return
    session.generation = this.generation
    if (target === undefined || target === current || target.sessions.size + 2 > current.sessions.size || !current.holdsNothingOf(session)) return
    current.detach(session)
    target.attach(session)
    session.child = target
  }

  release(session: StdioPoolTransport): void {
    this.#open.delete(session)
    session.child?.detach(session)
    const group = this.#groups.get(this.#groupKey(session))
    if (group === undefined) return
    group.sessions.delete(session)
    if (this.config.isolation === 'session') {
      const stopped = Promise.all(group.children.map((child) => child.stop('the session closed')))
      this.#forget(group)
      if (group.stateFolder !== undefined) void this.#removeFolder(group.stateFolder, stopped)
    } else if (group.sessions.size === 0 && group.children.length === 0 && group.key !== '*') {
      this.#forget(group)
    }
  }

  #groupKey(session: StdioPoolTransport): string {
    return groupKey(this.config.isolation, session, () => ++this.#nextSession)
  }

  #groupOf(session: StdioPoolTransport): Group {
    const group = this.#group(this.#groupKey(session))
    group.sessions.add(session)
    return group
  }

  #group(key: string): Group {
    let group = this.#groups.get(key)
    if (group === undefined) {
      group = newGroup(key, this.config)
      this.#groups.set(key, group)
    }
    return group
  }

  /** The child for a new session of `group`, or the milliseconds to wait for the group's restart. */
  #choose(group: Group): PoolChild | number {
    const { children } = group
    // A child started for a session that a ready child serves meanwhile counts as having it.
    const wantsAnother = children.length === 0 || children.every((child) => child.sessions.size > 0 || child.promised > 0)
    if (wantsAnother && children.length < group.capacity && this.#running < this.config.pool.max) {
      const waitMs = group.retryAt - Date.now()
      if (waitMs <= 0) {
        const spawned = this.#spawn(group)
        // While the new child starts, a ready one serves: a session is not kept waiting for a start
        // (it moves to the new child once that is ready, see rebalance).
        const ready = leastLoaded(children, 'ready')
        if (ready === undefined) return spawned
        spawned.promised++
        return ready
      }
      if (children.length === 0) {
        if (waitMs <= RESTART_WAIT_MS) return waitMs
        throw new TransportError(`${this.name}: the upstream failed ${group.failures} times in a row; next start in ${waitMs} ms`)
      }
    }
    if (children.length === 0) {
      throw new TransportError(`${this.name}: ${this.#running} children run, which is pool.max (isolation: ${this.config.isolation})`)
    }
    return leastLoaded(children, 'ready') ?? leastLoaded(children, undefined)!
  }

  #spawn(group: Group): PoolChild {
    const handshake = group.handshake ?? sharedHandshake(this.config, this.#clientInfo)
    const launch = group.stateFolder === undefined ? undefined : launchIn(this.config, group.stateFolder)
    const child = new PoolChild(this.config, handshake, this.#log, this.#graceMs, launch)
    child.ondeath = (gone, _reason, unexpected, served) => this.#died(group, gone, unexpected, served)
    child.onidle = (idle) => this.#idle(group, idle)
    group.children.push(child)
    this.#running++
    child.ready.then(() => {
      if (this.#closed) return
      child.promised = 0 // ready: what it has is what it serves
      this.generation++
      this.onavailability?.(true, undefined)
    }, noop)
    return child
  }

  #died(group: Group, child: PoolChild, unexpected: boolean, served: number): void {
    const index = group.children.indexOf(child)
    if (index === -1) return
    group.children.splice(index, 1)
    this.#running--
    let waitMs = 0
    if (unexpected) {
      this.restarts++
      waitMs = failed(group, child.readySince, this.#backoff)
      this.#log.warn({ childPid: child.pid, failures: group.failures, retryInMs: waitMs }, 'stdio upstream child failed; restarting with backoff')
    }
    if (this.#closed) return
    if (unexpected && !this.#anyReady()) {
      // The reason names what happened to the process, never its command line or output.
      const what = child.readySince > 0 ? 'its child process stopped unexpectedly' : 'its child process could not start'
      this.onavailability?.(false, `${what}; next start in ${waitMs} ms`)
    }
    // A shared child that served sessions comes back on its own (pool.min ones always do).
    if (group.key === '*' && ((unexpected && served > 0) || group.children.length < this.config.pool.min)) this.#replace(group)
    else if (group.key !== '*' && group.sessions.size === 0 && group.children.length === 0) this.#forget(group)
  }

  #anyReady(): boolean {
    for (const group of this.#groups.values()) for (const child of group.children) if (child.state === 'ready') return true
    return false
  }

  /** One more child of `group` once its backoff allows (pool.max still bounds them). */
  #replace(group: Group): void {
    group.replacements++
    clearTimeout(group.restartTimer)
    group.restartTimer = setTimeout(() => {
      const wanted = Math.max(group.replacements, this.config.pool.min - group.children.length)
      group.replacements = 0
      for (let n = 0; n < wanted && !this.#closed && group.children.length < group.capacity && this.#running < this.config.pool.max; n++) {
        this.#spawn(group).ready.catch(() => undefined)
      }
    }, Math.max(group.retryAt - Date.now(), 0)).unref()
  }

  #idle(group: Group, child: PoolChild): void {
    if (group.key === '*' && group.children.length <= this.config.pool.min) return child.keepIdle()
    void child.stop(`idle for ${this.config.pool.idle_timeout} s`)
  }

  #forget(group: Group): void {
    clearTimeout(group.restartTimer)
    this.#groups.delete(group.key)
  }

  /** A session's folder, removed once its children have stopped. */
  #removeFolder(folder: string, stopped: Promise<unknown>): Promise<void> {
    return removeFolder(folder, stopped).catch((error: unknown) => this.#log.warn({ folder, reason: (error as Error).message }, 'could not remove a session\'s state folder'))
  }
}

const noop = (): void => undefined

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
