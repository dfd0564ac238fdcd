/**
 * A virtual route (`include:`): a catalogue made of other routes' tools, chosen by name or glob.
 * Handler tools are registered on the virtual route as its own (the same callbacks, run with its
 * request context); an upstream's tools are listed and called through the proxy route that already
 * fronts it, so the upstream keeps one connection however many bundles show it (one stdio child, one
 * health probe, one credential cache), while sessions, scopes, limits and phases are this route's.
 *
 *   tools/list ─► this route's own tools (its handler, the included handler tools)
 *              └► each included upstream: source ProxyRoute.forward(this session, tools/list) ─► globs ─► prefix ─► scopes
 *   tools/call "fs_read_text_file" ─► own tool? ─► yes: called here
 *                                   └► no: prefix + glob lead to (source proxy, upstream, name) ─► scopes ─► forward
 */
import { CancelledError, RpcError } from '../client/errors.ts'
import type { IncludeConfig } from '../config/types.ts'
import type { EndpointExtension, McpEndpoint } from '../protocol/endpoint.ts'
import type { MethodHandler, MethodTable } from '../protocol/methods/index.ts'
import { checkScopes } from '../protocol/methods/params.ts'
import { toolMethods } from '../protocol/methods/tools.ts'
import { globToRegExp } from '../registry/component-scopes.ts'
import type { RequestContext } from '../registry/context.ts'
import type { SessionRecord } from '../store/store.ts'
import { McpError, RpcCode } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { ConsentRequiredError, CredentialError } from '../upstream/credentials/provider.ts'
import { describeFailure } from '../upstream/failure.ts'
import { cancellationOf, ProxyRoute } from '../upstream/proxy-route.ts'
import { META_UNAVAILABLE } from '../upstream/aggregate.ts'
import { registryHint, type ToolHint, type ToolLookup } from '../phases/approval-gate.ts'

/** Pages of one upstream's tools/list read for one listing. */
const MAX_PAGES = 100
/** Availability changes this close together make one list_changed (as on the proxy route). */
const LIST_CHANGED_COALESCE_MS = 100

/** One included upstream, reached through the proxy route that fronts it. */
interface UpstreamSource {
  readonly proxy: ProxyRoute
  readonly upstream: string
  readonly prefix: string
  readonly patterns: readonly RegExp[]
}

/** Where an exposed name leads; `destructive`: the upstream lists it with `annotations.destructiveHint`. */
interface Origin {
  readonly source: UpstreamSource
  readonly name: string
  readonly destructive?: boolean
}

/**
 * Makes `endpoint` a virtual route over `routes` (every route of the gateway, built): registers the
 * included handler tools, and serves tools/list and tools/call over the included upstreams. Throws
 * when a source is not what the config check said it is (a config built without validation).
 */
export function attachInclude(endpoint: McpEndpoint, routes: ReadonlyMap<string, McpEndpoint>): VirtualRoute {
  const upstreams: UpstreamSource[] = []
  for (const include of endpoint.route.include) {
    const source = routes.get(include.route)
    if (source === undefined) throw new Error(`include: no route ${include.route}`)
    const patterns = include.tools.map(globToRegExp)
    if (include.upstream !== undefined) {
      const proxy = source.extension
      if (!(proxy instanceof ProxyRoute) || !proxy.upstreams.has(include.upstream)) throw new Error(`include: route ${include.route} has no upstream ${include.upstream}`)
      upstreams.push({ proxy, upstream: include.upstream, prefix: include.prefix, patterns })
    } else {
      includeHandlerTools(endpoint, source, include, patterns)
    }
  }
  const virtual = new VirtualRoute(endpoint, upstreams)
  endpoint.extend(virtual, virtual.methods())
  return virtual
}

/** The source route's handler tools that match, registered here under their (prefixed) names with the same callbacks. */
function includeHandlerTools(endpoint: McpEndpoint, source: McpEndpoint, include: IncludeConfig, patterns: readonly RegExp[]): void {
  const tools = []
  for (const entry of source.catalogues.setup.entries()) {
    if (!('tool' in entry) || !patterns.some((pattern) => pattern.test(entry.tool.name))) continue
    tools.push({ ...entry.tool, name: include.prefix + entry.tool.name })
  }
  endpoint.catalogues.setup.register(...tools)
}

export class VirtualRoute implements EndpointExtension {
  readonly #endpoint: McpEndpoint
  readonly #sources: readonly UpstreamSource[]
  /** Exposed names learnt from lists (a name two sources could claim goes where the list showed it). */
  readonly #index = new Map<string, Origin>()
  readonly #unsubscribe: Array<() => void> = []
  #listChangedTimer: NodeJS.Timeout | undefined

  constructor(endpoint: McpEndpoint, sources: readonly UpstreamSource[]) {
    this.#endpoint = endpoint
    this.#sources = sources
    // An included upstream that comes or goes changes this route's list too: its sessions hear it.
    for (const source of sources) {
      const health = source.proxy.health.get(source.upstream)
      if (health !== undefined) this.#unsubscribe.push(health.onAvailability(() => this.#availabilityChanged()))
    }
  }

  #availabilityChanged(): void {
    if (this.#listChangedTimer !== undefined) return
    this.#listChangedTimer = setTimeout(() => {
      this.#listChangedTimer = undefined
      this.#endpoint.listChanged('tools')
    }, LIST_CHANGED_COALESCE_MS)
    this.#listChangedTimer.unref()
  }

  methods(): MethodTable {
    const table: MethodTable = {}
    if (this.#endpoint.method('tools/list') !== undefined) {
      table['tools/list'] = this.#list
      table['tools/call'] = this.#call
    }
    return table
  }

  /** Every tool in one page: this route's own, then each included upstream's, in config order. */
  readonly #list: MethodHandler = async (host, record, params, ctx) => {
    const tools: JsonObject[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const local = toolMethods['tools/list']!(host, record, cursor === undefined ? {} : { cursor }, ctx) as { tools: JsonObject[]; nextCursor?: string }
      tools.push(...local.tools)
      cursor = local.nextCursor
      if (cursor === undefined) break
    }
    const seen = new Set(tools.map((tool) => String(tool.name)))
    const unavailable: string[] = []
    const pages = await Promise.all(this.#sources.map((source) => this.#upstreamTools(source, record, params, ctx).catch((error: unknown) => error)))
    pages.forEach((page, i) => {
      const source = this.#sources[i]!
      if (!Array.isArray(page)) {
        unavailable.push(source.upstream)
        this.#endpoint.logger.warn({ upstream: source.upstream, reason: describeFailure(page) }, 'an included upstream did not list its tools')
        return
      }
      for (const tool of page) {
        const name = String(tool.name)
        if (!source.patterns.some((pattern) => pattern.test(name))) continue
        const exposed = source.prefix + name
        if (seen.has(exposed)) {
          this.#endpoint.logger.error({ upstream: source.upstream, name: exposed }, 'two included sources offer the same tool name; the first one keeps it (give one a prefix)')
          continue
        }
        seen.add(exposed)
        this.#index.set(exposed, { source, name, destructive: (tool.annotations as { destructiveHint?: unknown } | undefined)?.destructiveHint === true })
        if (host.scopes?.missing('tool', exposed, ctx.caller.scopes) !== undefined) continue
        tools.push(exposed === name ? tool : { ...tool, name: exposed })
      }
    })
    const result: JsonObject = { tools }
    if (unavailable.length > 0) result._meta = { [META_UNAVAILABLE]: unavailable }
    return result
  }

  readonly #call: MethodHandler = (host, record, params, ctx) => {
    const name = params.name
    if (typeof name !== 'string') throw new McpError(RpcCode.InvalidParams, 'tools/call needs params.name (a string)')
    if (host.viewOf(record).tool(name) !== undefined) return toolMethods['tools/call']!(host, record, params, ctx)
    const origin = this.#resolve(name)
    if (origin === undefined) throw new McpError(RpcCode.InvalidParams, `Unknown tool: ${name}`)
    checkScopes(host, ctx.caller, 'tool', name)
    return this.#forward(origin, record, params, ctx)
  }

  /** The listed origin of `exposed`, else the first source (config order) whose prefix and globs take it. */
  #resolve(exposed: string): Origin | undefined {
    const known = this.#index.get(exposed)
    if (known !== undefined) return known
    for (const source of this.#sources) {
      if (!exposed.startsWith(source.prefix)) continue
      const name = exposed.slice(source.prefix.length)
      if (source.patterns.some((pattern) => pattern.test(name))) return { source, name }
    }
    return undefined
  }

  async #forward(origin: Origin, record: SessionRecord, params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    const { proxy, upstream } = origin.source
    if (proxy.isDown(upstream)) return unavailable(upstream, proxy.health.get(upstream)?.reason)
    const sent: JsonObject = { ...params, name: origin.name }
    delete sent.task
    try {
      return await proxy.forward(record, upstream, 'tools/call', sent, ctx)
    } catch (error) {
      if (error instanceof McpError) throw error
      if (error instanceof RpcError || error instanceof CancelledError || cancellationOf(ctx).aborted || error instanceof ConsentRequiredError) throw proxy.asClientError(upstream, error)
      if (error instanceof CredentialError) return { content: [{ type: 'text', text: error.message }], isError: true }
      return unavailable(upstream, describeFailure(error))
    }
  }

  async #upstreamTools(source: UpstreamSource, record: SessionRecord, params: JsonObject, ctx: RequestContext): Promise<JsonObject[]> {
    const upstream = source.proxy.upstreams.get(source.upstream)!
    const tools: JsonObject[] = []
    let cursor: unknown
    for (let page = 0; page < MAX_PAGES; page++) {
      const asked: JsonObject = params._meta === undefined ? {} : { _meta: params._meta }
      if (typeof cursor === 'string') asked.cursor = cursor
      const result = await source.proxy.forward(record, source.upstream, 'tools/list', asked, undefined, { timeoutMs: upstream.list_timeout * 1000, who: ctx.caller })
      if (Array.isArray(result.tools)) for (const tool of result.tools) if (isNamed(tool)) tools.push(tool)
      cursor = result.nextCursor
      if (typeof cursor !== 'string' || cursor === '') break
    }
    return tools
  }

  /**
   * What the approval gate (phases/approval-gate.ts) knows of a tool here: an own or included handler
   * tool by the registry, an upstream's by the annotations its list showed (listed once on a worker
   * that has not listed it yet).
   */
  readonly toolLookup: ToolLookup = (host, record, name, params, ctx) => {
    const local = registryHint(host, record, name)
    if (local !== 'unknown') return local
    const hint = (origin: Origin | undefined): ToolHint => (origin === undefined ? 'unknown' : origin.destructive === true ? 'destructive' : 'other')
    if (this.#index.has(name)) return hint(this.#index.get(name))
    return Promise.resolve(this.#list(host, record, params._meta === undefined ? {} : { _meta: params._meta }, ctx)).then(() => hint(this.#index.get(name)))
  }

  // ---- EndpointExtension ---------------------------------------------------------------------

  /** The session ended here: its upstream sessions (opened through the sources' proxies) end too. */
  async sessionEnded(record: SessionRecord | undefined, id: string): Promise<void> {
    const proxies = new Set(this.#sources.map((source) => source.proxy))
    await Promise.all([...proxies].map((proxy) => proxy.sessionEnded(record, id)))
  }

  /** The included upstreams' health, as their own routes see it. */
  report(): Record<string, unknown> {
    return Object.fromEntries(this.#sources.map((source) => [source.upstream, source.proxy.health.get(source.upstream)?.report()]))
  }

  /** Stops hearing the sources' availability; their routes own their connections. */
  close(): void {
    clearTimeout(this.#listChangedTimer)
    for (const unsubscribe of this.#unsubscribe) unsubscribe()
  }

  knows(kind: 'tool' | 'prompt' | 'resource', name: string): string | undefined {
    return kind === 'tool' && this.#index.has(name) ? name : undefined
  }
}

function unavailable(upstream: string, reason: string | undefined): JsonObject {
  const text = `The upstream server "${upstream}" is unavailable${reason === undefined ? '' : `: ${reason}`}. Try again later.`
  return { content: [{ type: 'text', text }], isError: true, _meta: { [META_UNAVAILABLE]: [upstream] } }
}

function isNamed(item: unknown): item is JsonObject {
  return item !== null && typeof item === 'object' && !Array.isArray(item) && typeof (item as JsonObject).name === 'string'
}
