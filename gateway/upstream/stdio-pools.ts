/**
 * Every stdio pool of one worker: a pool per configured stdio upstream (each route's upstream is
 * its own, even when two routes name the same command), made on first use. This is what the proxy
 * routes are handed to open stdio upstreams: `transport(upstream, key)` is the seam.
 */
import type { Logger } from 'pino'
import type { Transport } from '../client/transport.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { resolveStdioUpstream, type StdioUpstreamInput } from './stdio-pool-config.ts'
import type { ModernOptions } from './stdio-pool-modern.ts'
import { StdioPool, type AvailabilityListener, type StdioBackoff, type StdioChildStatus } from './stdio-pool.ts'

/** An upstream as the proxy's config has it: `command` is absent for HTTP and WebSocket upstreams. */
export type StdioUpstreamLike = Omit<StdioUpstreamInput, 'command'> & { command?: StdioUpstreamInput['command'] }

/** Who the transport is for: the session (absent for a stateless request), the principal, the session's own initialize. */
export interface StdioTransportKey {
  readonly session?: string
  readonly principal?: string
  readonly initialize?: JsonObject
}

export interface StdioPoolsOptions {
  log: Logger
  /** The config file's folder: `cwd` and relative program paths are resolved against it. */
  baseDir: string
  backoff?: StdioBackoff
  graceMs?: number
}

/** The stdio pools of this worker, keyed by the upstream's config object. */
export class StdioPools {
  readonly #options: StdioPoolsOptions
  readonly #pools = new Map<StdioUpstreamLike, StdioPool>()
  #closed = false

  constructor(options: StdioPoolsOptions) {
    this.#options = options
  }

  /** A connection to `upstream` for one session (or stateless caller); throws when `upstream` has no command or the pools are closed. */
  transport(upstream: StdioUpstreamLike, key: StdioTransportKey): Transport {
    return this.pool(upstream).transportFor({ session: key.session ?? '', principal: key.principal, initialize: key.initialize })
  }

  /** The pool of `upstream`, made on first use (its config checked then: a bad command throws). */
  pool(upstream: StdioUpstreamLike): StdioPool {
    if (this.#closed) throw new Error(`upstream ${upstream.name}: the stdio pools are closed`)
    let pool = this.#pools.get(upstream)
    if (pool === undefined) {
      if (upstream.command === undefined) throw new Error(`upstream ${upstream.name} has no command: it is not a stdio upstream`)
      const config = resolveStdioUpstream({ ...upstream, command: upstream.command }, this.#options.baseDir)
      pool = new StdioPool(config, { log: this.#options.log, backoff: this.#options.backoff, graceMs: this.#options.graceMs })
      this.#pools.set(upstream, pool)
    }
    return pool
  }

  /** `listener` hears when `upstream` becomes available or unavailable on this worker (one listener per upstream). */
  watch(upstream: StdioUpstreamLike, listener: AvailabilityListener): void {
    this.pool(upstream).onavailability = listener
  }

  /** Starts `upstream`'s children (`shared`) now: one that fails to start is restarted with backoff, and its health says why. */
  prestart(upstream: StdioUpstreamLike): void {
    const pool = this.pool(upstream)
    pool.warm().catch(() => undefined)
    // Whether its server speaks 2026-07-28 is known before the first stateless request (a child that
    // does not is stopped as soon as its discover says so).
    void pool.speaksStateless(pool.config.pool.start_timeout * 1000)
  }

  /** True when `upstream` takes 2026-07-28 requests as they are (see StdioPool.speaksStateless). */
  speaksStateless(upstream: StdioUpstreamLike, timeoutMs: number): boolean | Promise<boolean> {
    return this.pool(upstream).speaksStateless(timeoutMs)
  }

  /** One 2026-07-28 request to `upstream`, as it came. */
  statelessRequest(upstream: StdioUpstreamLike, method: string, params: JsonObject, options: ModernOptions): Promise<JsonObject> {
    return this.pool(upstream).statelessRequest(method, params, options)
  }

  /** Each pool's children, by upstream name, for /readyz. */
  status(): Array<{ upstream: string; children: StdioChildStatus[]; restarts: number }> {
    return [...this.#pools.values()].map((pool) => ({ upstream: pool.name, children: pool.status(), restarts: pool.restarts }))
  }

  /** Closes every pool: sessions end, every child's process group is killed. */
  async close(): Promise<void> {
    this.#closed = true
    const pools = [...this.#pools.values()]
    this.#pools.clear()
    await Promise.all(pools.map((pool) => pool.close()))
  }
}
