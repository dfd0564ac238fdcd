/**
 * A proxy route on one worker: its upstreams' links (one per downstream session and upstream, made
 * on first use), their health, the indexes that map exposed names and URIs back to an upstream, and
 * forwarding of one request with everything that belongs to it.
 *
 *   downstream request ──► endpoint (session record, ctx) ──► ProxyRoute.forward(upstream, method, params, ctx)
 *                                                                  │  name mapped back, _meta kept
 *                                                                  │  progress: ctx.progress ◄── upstream progress (own token)
 *                                                                  │  cancel:   ctx.signal ──► notifications/cancelled (its id)
 *                                                                  ▼
 *                                      UpstreamLink (session from the record: no handshake) ──► upstream
 */
import type { Logger } from 'pino'
import type { McpClient } from '../client/client.ts'
import { RpcError, TimeoutError } from '../client/errors.ts'
import type { RouteConfig, UpstreamConfig } from '../config/types.ts'
import type { McpError } from '../wire/errors.ts'
import type { RequestContext } from '../registry/context.ts'
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { SessionRecord, UpstreamSession } from '../store/store.ts'
import type { ListKind } from './aggregate.ts'
import { RouteIndex } from './route-index.ts'
import { healthReports, upstreamStatuses, type UpstreamStatus } from './upstream-status.ts'
import type { StdioTransports } from './connect.ts'
import { CrossEra, parkable } from './cross-era.ts'
import { statelessForSession } from './cross-era-rounds.ts'
import { describeFailure, isUnavailability } from './failure.ts'
import type { Span } from '@opentelemetry/api'
import { callRecordOf, relayedRounds } from '../events/call-record.ts'
import { APPROVAL_INPUT_KEY } from '../phases/approval-ask.ts'
import { endHopSpan, startHopSpan, withTraceparent } from '../protocol/hop-tracing.ts'
import { tracing } from '../protocol/tracing.ts'
import { UpstreamHealth, type HealthReport } from './health.ts'
import type { Naming, Origin } from './names.ts'
import { installRelay } from './relay.ts'
import { cancellationOf, clientErrorOf, requestOptions, statelessRequest, upstreamErrorKind, type ForwardExtra } from './forward-request.ts'
import { probeUpstream } from './upstream-probe.ts'
import { StatelessUpstream } from './stateless-upstream.ts'
import { OpenApiUpstream } from './openapi/openapi-upstream.ts'
import { initializeRefused, type UpstreamLink, type LinkHost } from './upstream-link.ts'
import { CredentialContext } from './credentials/context.ts'
import { routeCredentials } from './route-credentials.ts'
import { ConsentRequiredError, type CredentialProvider } from './credentials/provider.ts'
import { askConsent } from './consent-step.ts'
import { ListCache } from './list-cache.ts'
import { ListChangedNotices } from './list-changed-notices.ts'
import { LinkTable, PROBE } from './link-table.ts'

export { cancellationOf, type ForwardExtra } from './forward-request.ts'
export type { UpstreamStatus } from './upstream-status.ts'


/** Input requests the gateway itself asks on a route (the approval gate's), named by it rather than relayed. */
const GATEWAY_INPUT_KEYS: ReadonlySet<string> = new Set([APPROVAL_INPUT_KEY])
/** Milliseconds between sweeps of idle links. */
const SWEEP_MS = 30_000

/** Where a downstream request goes: an upstream, with the name it has there. */
export type Target = Origin

export class ProxyRoute implements LinkHost {
  readonly endpoint: McpEndpoint
  readonly route: RouteConfig
  readonly naming: Naming
  readonly stdio: StdioTransports | undefined
  readonly upstreams: ReadonlyMap<string, UpstreamConfig>
  readonly names: ReadonlySet<string>
  readonly health = new Map<string, UpstreamHealth>()
  /** What exposed names, URIs and templates lead to (route-index.ts). */
  readonly index: RouteIndex
  /** Exposed tool and prompt names learnt from lists (the index's). */
  readonly toolIndex: Map<string, Origin>
  readonly promptIndex: Map<string, Origin>
  readonly #links = new LinkTable(this)
  /** Each upstream's credential provider. */
  readonly #credentials: ReadonlyMap<string, CredentialProvider>
  /** The upstreams whose calls may need the caller's consent (per-user OAuth). */
  readonly #consents: ReadonlySet<string>
  /** HTTP upstreams, for stateless downstream requests. */
  readonly #stateless = new Map<string, StatelessUpstream>()
  /** `openapi:` upstreams (REST APIs), by name: no session, no link, one REST request per call. */
  readonly #openapi = new Map<string, OpenApiUpstream>()
  /** stdio upstreams' 2026-07-28 channels, by name. */
  readonly #stdioChannels = new Map<string, Pick<StatelessUpstream, 'request'>>()
  /** Stateless clients' calls on 2025 upstreams, parked between their rounds. */
  readonly crossEra: CrossEra
  /** The route's shared list cache (list-cache.ts); undefined with `list_cache: false`. */
  readonly listCache: ListCache | undefined
  readonly #logger: Logger
  readonly #sweeper: NodeJS.Timeout
  readonly #idleMs: number
  /** The route's sessions hear that lists changed (list-changed-notices.ts). */
  readonly #notices: ListChangedNotices
  /** resultsAsSent's answer, made at the route's first call. */
  #resultsAsSent: boolean | undefined

  /** Throws MCP_EDGE_CONFIG_INVALID when an upstream's `auth:` cannot be set up (a key file unreadable, …). */
  constructor(endpoint: McpEndpoint, stdio: StdioTransports | undefined, credentials: CredentialContext = new CredentialContext(endpoint.logger)) {
    this.endpoint = endpoint
    this.route = endpoint.route
    this.stdio = stdio
    this.#logger = endpoint.logger
    this.upstreams = new Map(this.route.upstreams.map((upstream) => [upstream.name, upstream]))
    this.names = new Set(this.upstreams.keys())
    this.index = new RouteIndex(this.route, this.names)
    this.naming = this.index.naming
    this.toolIndex = this.index.tools
    this.promptIndex = this.index.prompts
    this.#idleMs = this.route.longest_standby * 1000
    const { providers, consents } = routeCredentials(this.route.upstreams, credentials)
    this.#credentials = providers
    this.#consents = consents
    this.crossEra = new CrossEra(endpoint.store, this.route, this.#logger)
    this.listCache = this.route.list_cache === false ? undefined : new ListCache(endpoint.store, this.route, this.route.list_cache, this.#logger)
    this.#notices = new ListChangedNotices(endpoint, this.listCache, this.#logger)
    for (const upstream of this.route.upstreams) {
      if (upstream.openapi !== undefined) this.#openapi.set(upstream.name, new OpenApiUpstream(upstream, this.credentials(upstream)))
      const probe = upstream.url === undefined ? undefined : () => this.#probe(upstream)
      // A 2024-11-05 (sse) upstream has no 2026-07-28 era to discover.
      if (upstream.url !== undefined && upstream.sse === undefined && /^https?:/.test(upstream.url)) this.#stateless.set(upstream.name, new StatelessUpstream(upstream, this.credentials(upstream)))
      const health = new UpstreamHealth(upstream.name, upstream.health_interval * 1000, probe, this.#logger, describeFailure, upstream.start_wait * 1000)
      this.health.set(upstream.name, health)
      health.onAvailability(() => this.#notices.availabilityChanged(upstream.name))
      health.start()
      // A REST API has no ping: its document loaded, it serves; each call's failure is that call's result.
      if (upstream.openapi !== undefined) health.ok()
      // A stdio upstream's health is its pool's word: a child ready, or the last one lost (it restarts itself).
      if (upstream.url === undefined) stdio?.watch?.(upstream, (available, reason) => (available ? health.ok() : health.failed(reason ?? 'unavailable')))
    }
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_MS)
    this.#sweeper.unref()
  }

  // ---- LinkHost ------------------------------------------------------------------------------

  timeoutMs(upstream: UpstreamConfig): number {
    return (upstream.timeout ?? this.route.read_timeout) * 1000
  }

  credentials(upstream: UpstreamConfig): CredentialProvider {
    return this.#credentials.get(upstream.name)!
  }

  relay(client: McpClient, link: UpstreamLink): void {
    if (link.owner.session !== PROBE) installRelay(this.endpoint, client, link, this.listCache === undefined ? undefined : (list) => this.upstreamListChanged(link.upstream.name, list))
  }

  /**
   * An upstream said its list changed, on one of its sessions: its cached lists go (on every worker
   * and host), and since every session of the route listed from them, every session hears it.
   */
  upstreamListChanged(upstream: string, list: 'tools' | 'prompts' | 'resources'): void {
    this.#notices.upstreamListChanged(upstream, list)
  }

  async reloaded(): Promise<void> {
    await this.listCache?.invalidateAll()
  }

  async save(link: UpstreamLink, session: UpstreamSession): Promise<void> {
    const id = link.owner.session
    if (id === '' || id === PROBE) return
    await this.endpoint.store.update(id, { upstream: link.upstream.name, session })
  }

  async opened(client: McpClient, link: UpstreamLink): Promise<void> {
    const id = link.owner.session
    if (id === '' || id === PROBE || client.serverCapabilities?.logging === undefined) return
    const record = await this.endpoint.store.get(id)
    if (record?.logLevel !== undefined) await client.setLogLevel(record.logLevel).catch(() => undefined)
  }

  // ---- forwarding ----------------------------------------------------------------------------

  /** The link of `record`'s session (or stateless principal) to `upstream` (link-table.ts). */
  link(record: SessionRecord, upstream: UpstreamConfig): UpstreamLink {
    return this.#links.of(record, upstream)
  }

  /**
   * Sends one request upstream on behalf of `ctx`'s request: progress and cancellation follow it,
   * and the upstream's own requests on its stream are asked of this request's client. A stateless
   * downstream request goes up stateless when the upstream speaks 2026-07-28, else on the pooled
   * session of its principal. Rejects with the upstream's RpcError, or with the failure that made it
   * unavailable (health is told).
   */
  forward(record: SessionRecord, name: string, method: string, params: JsonObject, ctx: RequestContext | undefined, extra: ForwardExtra = {}): Promise<JsonObject> {
    const sent = this.#forwardOnce(record, name, method, params, ctx, extra)
    // Per-user OAuth: a caller without a token consents through the protocol (consent-step.ts), then the call goes on.
    if (ctx === undefined || !this.#consents.has(name)) return sent
    return sent.catch(async (error: unknown) => {
      if (!(error instanceof ConsentRequiredError)) throw error
      await askConsent(error, this.#credentials.get(name)!, record, ctx)
      return this.#forwardOnce(record, name, method, params, ctx, extra)
    })
  }

  async #forwardOnce(record: SessionRecord, name: string, method: string, params: JsonObject, ctx: RequestContext | undefined, extra: ForwardExtra): Promise<JsonObject> {
    const upstream = this.upstreams.get(name)!
    const timeoutMs = extra.timeoutMs ?? this.timeoutMs(upstream)
    const health = this.health.get(name)!
    const call = callRecordOf(ctx)
    // A list fans out to every upstream: only a call that goes to one names it.
    if (call !== undefined && !method.endsWith('/list')) call.upstream = name
    const started = performance.now()
    let hop: Span | undefined
    if (tracing.on) {
      hop = startHopSpan(call?.span, method, name, params)
      params = withTraceparent(params, hop)
    }
    const who = ctx?.caller ?? extra.who
    try {
      const stateless = this.#stateless.get(name)
      // Known after the first discover: a session's request waits for no promise here.
      let only = record.id !== '' && stateless !== undefined ? stateless.statelessOnly(timeoutMs, who) : false
      if (only !== true && only !== false) only = await only
      let result: JsonObject
      const rest = this.#openapi.get(name)
      if (rest !== undefined) {
        result = await rest.request(method, params, { timeoutMs, signal: ctx === undefined ? undefined : cancellationOf(ctx), who })
      } else if (record.id === '' && stateless !== undefined && (await stateless.speaksStateless(timeoutMs, who))) {
        result = await statelessRequest(stateless, name, method, params, ctx, timeoutMs, extra)
      } else if (record.id === '' && upstream.url === undefined && (await this.stdio?.speaksStateless?.(upstream, timeoutMs)) === true) {
        // A stdio child that speaks 2026-07-28 takes the request as it came (stdio-pool-modern.ts).
        result = await statelessRequest(this.#stdioStateless(upstream), name, method, params, ctx, timeoutMs, extra)
      } else if (only && stateless !== undefined) {
        result = await this.#sessionOnModern(stateless, record, upstream, method, params, ctx, timeoutMs, extra)
      } else if (parkable(record, method, ctx)) {
        // A per-user credential is had before the call is parked: a consent is this round's answer, not the parked call's.
        const provider = this.#credentials.get(name)!
        if (provider.perPrincipal) {
          const headers = provider.headers(who)
          if (headers instanceof Promise) await headers
        }
        const link = this.link(record, upstream)
        if (who !== undefined) link.who = who
        result = await this.crossEra.call(link, upstream, record, method, params, ctx, timeoutMs, record.upstreams?.[name])
      } else {
        const link = this.link(record, upstream)
        if (who !== undefined) link.who = who
        result = await link.request(method, params, requestOptions(ctx, timeoutMs, extra.resultAsSent), record.upstreams?.[name])
      }
      health.ok()
      // A stateless call's rounds this route passed on (the gateway asked nothing itself): the audit's.
      if (record.id === '') relayedRounds(ctx, params, result, GATEWAY_INPUT_KEYS)
      const failed = result.isError === true ? 'tool_error' : undefined
      this.endpoint.calls?.upstreamCall(name, (performance.now() - started) / 1000, failed)
      if (hop !== undefined) endHopSpan(hop, failed)
      return result
    } catch (error) {
      // A stdio call's failure is that call's: a slow one timed out, a crash is the pool's to report (and restart).
      if (upstream.url === undefined) throw error
      // A call that timed out is that call's (a slow tool): the upstream answers others meanwhile, and a
      // hung one is found by its probe. A list that timed out is the upstream's (lists are quick; and
      // being down is what has its coming back announced as list_changed, health.ts).
      const callsOwn = error instanceof TimeoutError && !method.endsWith('/list')
      if (isUnavailability(error) && !callsOwn && !(ctx !== undefined && cancellationOf(ctx).aborted)) health.failed(describeFailure(error))
      else if (error instanceof RpcError) health.ok()
      const kind = upstreamErrorKind(error)
      this.endpoint.calls?.upstreamCall(name, (performance.now() - started) / 1000, kind)
      if (hop !== undefined) endHopSpan(hop, kind)
      throw error
    }
  }

  /**
   * A session client's request to an upstream whose discover lists 2026-07-28 alone: on a session of
   * the client's own era when the upstream accepts that initialize (so its elicitation, sampling,
   * roots and list_changed reach the client as on any session); once it refuses one, stateless on
   * this worker from then on, its input-required rounds asked on the client's session.
   */
  async #sessionOnModern(stateless: StatelessUpstream, record: SessionRecord, upstream: UpstreamConfig, method: string, params: JsonObject, ctx: RequestContext | undefined, timeoutMs: number, extra: ForwardExtra): Promise<JsonObject> {
    const who = ctx?.caller ?? extra.who
    if (!stateless.sessionsRefused) {
      try {
        const link = this.link(record, upstream)
        if (who !== undefined) link.who = who
        return await link.request(method, params, requestOptions(ctx, timeoutMs), record.upstreams?.[upstream.name])
      } catch (error) {
        if (!initializeRefused(error)) throw error
        stateless.sessionsRefused = true
        this.#logger.info({ upstream: upstream.name }, 'upstream refused a 2025-era session; session clients go up stateless')
      }
    }
    return statelessForSession(stateless, upstream, record, method, params, ctx, timeoutMs, extra.paramHeaders, who)
  }

  /** A stdio upstream's 2026-07-28 requests, in the shape of an HTTP one's (made once per upstream). */
  #stdioStateless(upstream: UpstreamConfig): Pick<StatelessUpstream, 'request'> {
    let channel = this.#stdioChannels.get(upstream.name)
    if (channel === undefined) {
      const stdio = this.stdio!
      channel = { request: (method, params, options) => stdio.statelessRequest!(upstream, method, params, options) }
      this.#stdioChannels.set(upstream.name, channel)
    }
    return channel
  }

  /**
   * True when this route's tool results may reach the client as the upstream wrote them (its bytes
   * behind the client's own id, wire/message-text.ts): nothing on the route reads a result to change
   * it, as no filter phase, rewrite phase seeing tools/call, request translation (search mode) or
   * approval gate is there. Decided once per route, at its first call: the route's setup (which adds
   * the gate and search mode after the proxy) is complete by then, and a reload builds a new route.
   */
  get resultsAsSent(): boolean {
    if (this.#resultsAsSent === undefined) {
      const endpoint = this.endpoint
      const rewrite = endpoint.rewrite
      this.#resultsAsSent = endpoint.filter === undefined && (rewrite === undefined || !rewrite.sees('tools/call')) && endpoint.translate === undefined && this.route.approval === undefined
    }
    return this.#resultsAsSent
  }

  /** Forwards a request whose answer goes back as it is: the upstream's errors become the client's. */
  async passThrough(record: SessionRecord, target: Target, method: string, params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    try {
      return await this.forward(record, target.upstream, method, params, ctx)
    } catch (error) {
      throw this.asClientError(target.upstream, error)
    }
  }

  /** An upstream failure as the JSON-RPC error the downstream client gets. */
  asClientError(name: string, error: unknown): McpError {
    return clientErrorOf(name, error)
  }

  /**
   * True when the upstream is known to be down on this worker (calls answer at once instead of
   * waiting). Never for a stdio upstream: its pool restarts a lost child and a call waits for a
   * restart due soon, or is refused by the pool at once.
   */
  isDown(name: string): boolean {
    return this.health.get(name)?.state === 'down' && this.upstreams.get(name)?.url !== undefined
  }

  // ---- names and URIs ------------------------------------------------------------------------

  /** Where an exposed tool or prompt name leads (route-index.ts). */
  resolveName(kind: 'tool' | 'prompt', exposed: string): Origin | undefined {
    return this.index.resolveName(kind, exposed)
  }

  /** The upstream serving `uri` (route-index.ts). */
  resolveUri(uri: string): string | undefined {
    return this.index.resolveUri(uri)
  }

  /** The upstream that listed the resource template `uriTemplate`. */
  resolveTemplate(uriTemplate: string): string | undefined {
    return this.index.resolveTemplate(uriTemplate)
  }

  /** Learns one upstream's list page: names and URIs map back to it from now on. */
  learn(kind: ListKind, name: string, items: readonly JsonObject[]): void {
    this.index.learn(kind, name, items)
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  /** The downstream session ended here: end its upstream sessions too. */
  async sessionEnded(record: SessionRecord | undefined, id: string): Promise<void> {
    await Promise.all(this.#links.take(id).map((link) => link.end(record?.upstreams?.[link.upstream.name])))
  }

  /** The label of a component an upstream listed (events/call-events.ts): names from its lists only. */
  knows(kind: 'tool' | 'prompt' | 'resource', name: string): string | undefined {
    return this.index.knows(kind, name)
  }

  /** Each upstream as the metrics and the admin API show it: transport, health, reconnections, stdio children. */
  upstreamStatus(): UpstreamStatus[] {
    return upstreamStatuses(this.route.upstreams, this.health, this.stdio)
  }

  /** Each upstream's health on this worker, for /readyz. */
  report(): Record<string, HealthReport> {
    return healthReports(this.health)
  }

  close(): void {
    clearInterval(this.#sweeper)
    this.#notices.close()
    this.crossEra.close()
    this.listCache?.close()
    for (const health of this.health.values()) health.stop()
    this.#links.close()
    for (const provider of this.#credentials.values()) provider.close()
    // Children are killed as process groups; close() is synchronous, the kill goes on.
    this.stdio?.close().catch((error: unknown) => this.#logger.warn({ err: error }, 'closing stdio upstreams failed'))
  }

  async #probe(upstream: UpstreamConfig): Promise<void> {
    await probeUpstream(this.#links.probe(upstream), this.#stateless.get(upstream.name), Math.min(this.timeoutMs(upstream), upstream.health_interval * 1000))
  }

  #sweep(): void {
    this.#links.sweep(Date.now() - this.#idleMs)
  }
}
