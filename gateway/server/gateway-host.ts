/**
 * Hosts a gateway behind a front server and swaps it for a new generation on reload, in one process:
 * the port stays open, the store (and with it every session, the memory store's included) outlives
 * each generation, requests in flight finish on the generation that took them, and no connection is
 * closed (no keep-alive race with a client sending its next request). Used by a single process and
 * by each worker under the cluster primary.
 *
 *   reload() ──► load the config ──► build generation n+1 (fresh handler modules, same store)
 *           ──► front.activate(n+1) ──► generation n: its requests in flight finish (drain_timeout),
 *               its streams end (clients resume on n+1 with Last-Event-ID), its app closes
 *
 * Old generations' module code stays in memory (ES modules cannot be unloaded): a few kilobytes per
 * reload of a typical handler; restart a process that reloads thousands of times.
 */
import { randomBytes } from 'node:crypto'
import cluster from 'node:cluster'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { loadConfig } from '../config/load.ts'
import type { GatewayConfig } from '../config/types.ts'
import { createLogger } from '../log/logger.ts'
import { startTracing } from '../protocol/tracing.ts'
import { createLimiter } from '../store/create-limiter.ts'
import { createStore } from '../store/create-store.ts'
import type { Limiter } from '../store/limiter.ts'
import type { SessionStore } from '../store/store.ts'
import { drainGateway } from './drain.ts'
import { FrontServer } from './front-server.ts'
import { buildGateway, storeReachable, type Gateway } from './server.ts'

/** Keys a reload cannot apply to a running process; a change to them is reported, not applied. */
const FIXED_AT_START = ['listen', 'workers', 'store', 'connections', 'admin'] as const

/** What one process's reload came to. */
export interface GenerationOutcome {
  ok: boolean
  problems: string[]
  detail?: string
}

/** A serving process's host, listening, with what it was made of (its logger, tracing, store). */
export interface LaunchedHost {
  readonly host: GatewayHost
  readonly store: SessionStore
  readonly logger: Logger
  readonly url: string
}

/**
 * What every serving process (a single process, a cluster worker) does first: its logger, tracing
 * and store, then a host on the port. A host that cannot start closes the store and throws.
 */
export async function launchHost(config: GatewayConfig, override?: (config: GatewayConfig) => void): Promise<LaunchedHost> {
  // A single process is its output's only writer; a cluster's workers and primary share theirs.
  const logger = createLogger(config.log, { exclusive: !cluster.isWorker })
  await startTracing(logger)
  const store = createStore(config.store, { logger })
  const host = new GatewayHost(config, store, logger, override)
  try {
    return { host, store, logger, url: await host.start() }
  } catch (error) {
    await store.close().catch(() => undefined)
    throw error
  }
}

export class GatewayHost {
  readonly front: FrontServer
  readonly #config: GatewayConfig
  readonly #store: SessionStore
  /** Shared by every generation like the store: counters survive a reload, and no connection is made anew. */
  readonly #limiter: Limiter
  readonly #logger: Logger
  readonly #override: (config: GatewayConfig) => void
  #current: Gateway | undefined
  #generation = 0

  constructor(config: GatewayConfig, store: SessionStore, logger: Logger, override: (config: GatewayConfig) => void = () => undefined) {
    this.#config = config
    this.#store = store
    this.#logger = logger
    this.#override = override
    this.front = new FrontServer(config.connections, logger)
    this.#limiter = createLimiter(config.store, { store })
    // Every generation must verify the requestState the one before signed (a stateless round may
    // span a reload): without a configured key, one random key for the life of the process.
    if (config.store.type === 'memory' && config.request_state.key === undefined && process.env.MCP_EDGE_REQUEST_STATE_KEY === undefined) {
      process.env.MCP_EDGE_REQUEST_STATE_KEY = randomBytes(32).toString('base64url')
    }
  }

  /** The generation serving now. */
  get gateway(): Gateway {
    if (this.#current === undefined) throw new Error('GatewayHost: not started')
    return this.#current
  }

  /** Builds the first generation and listens; resolves with the base URL bound. */
  async start(): Promise<string> {
    const gateway = await buildGateway(this.#config, { logger: this.#logger, store: this.#store, limiter: this.#limiter, front: this.front })
    await gateway.app.ready()
    await storeReachable(this.#config, this.#store, this.#logger)
    this.front.activate(gateway.app.server)
    this.#current = gateway
    const { host, port } = this.#config.listen
    this.front.server.listen({ host, port })
    await once(this.front.server, 'listening')
    await this.#listenMetrics(gateway, this.#config)
    const address = this.front.server.address()
    const bound = typeof address === 'object' && address !== null ? address.port : port
    return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`
  }

  /** Loads the config file and its handler modules afresh and serves them; on any failure nothing changes. */
  async reload(): Promise<GenerationOutcome> {
    let next: GatewayConfig
    let fresh: Gateway
    try {
      next = await loadConfig(this.#config.file)
      this.#override(next)
      fresh = await buildGateway(next, { logger: this.#logger, store: this.#store, limiter: this.#limiter, front: this.front, generation: this.#generation + 1 })
      await fresh.app.ready()
    } catch (error) {
      const problems = String((error as Error).message).split('\n')
      this.#logger.error({ problems }, `reload refused, still serving generation ${this.#generation}`)
      return { ok: false, problems }
    }
    const fixed = FIXED_AT_START.filter((key) => JSON.stringify(next[key]) !== JSON.stringify(this.#config[key]))
    if (fixed.length > 0) this.#logger.warn({ keys: fixed }, `reload: ${fixed.join(', ')} changed; they apply at the next start, not now`)
    this.#generation++
    this.front.activate(fresh.app.server)
    const old = this.gateway
    this.#current = fresh
    // A metrics listener of its own (`metrics.listen`) moves to the new generation: a scrape in between may be refused.
    await old.metricsApp?.close().catch(() => undefined)
    await this.#listenMetrics(fresh, next).catch((error: unknown) => this.#logger.error({ err: error }, 'reload: the metrics listener could not listen again'))
    void this.#retire(old, next.drain_timeout * 1000)
    // Once the new generation serves (the old one takes no new list), what the old one cached goes:
    // awaited, so `mcp-edge reload` answering means no list from before it is served.
    await Promise.all([...fresh.endpoints.values()].map((endpoint) => endpoint.extension?.reloaded?.().catch((error: unknown) => {
      this.#logger.warn({ err: error, route: endpoint.route.location }, 'reload: could not drop the route\'s cached lists')
    })))
    const routes = next.routes.map((route) => route.location)
    this.#logger.info({ generation: this.#generation, routes }, 'reloaded')
    return { ok: true, problems: [], detail: `generation ${this.#generation}: ${routes.join(', ')}` }
  }

  async #listenMetrics(gateway: Gateway, config: GatewayConfig): Promise<void> {
    if (gateway.metricsApp === undefined || config.metrics.listen === undefined) return
    await gateway.metricsApp.listen({ host: config.metrics.listen.host, port: config.metrics.listen.port })
  }

  /** Stops accepting, drains the generation serving now; the store is the caller's to close. */
  async drain(timeoutMs: number): Promise<void> {
    await drainGateway(this.gateway, timeoutMs, this.front.server)
    await this.#limiter.close().catch(() => undefined)
  }

  /** Lets an old generation finish what it took, then ends it; its sessions live on in the store. */
  async #retire(old: Gateway, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    const inFlight = (): number => {
      let count = 0
      for (const endpoint of old.endpoints.values()) for (const [, live] of endpoint.live.entries()) count += live.inflight.size
      return count
    }
    while (inFlight() > 0 && Date.now() < deadline) await sleep(25)
    const left = inFlight()
    if (left > 0) this.#logger.warn({ inFlight: left }, 'reload: requests of the old generation still in flight at drain_timeout are cancelled')
    // Ends the old endpoints' streams (their clients reconnect with Last-Event-ID and reach the new
    // generation) and its app; the store belongs to the new generation too and stays open.
    await old.close().catch((error: unknown) => this.#logger.warn({ err: error }, 'reload: closing the old generation failed'))
  }
}
