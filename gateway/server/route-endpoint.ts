/**
 * One route's protocol endpoint, built the same way for every transport: a fresh registry, the
 * endpoint around it, and the route's handler module run against them.
 */
import type { Logger } from 'pino'
import type { RouteConfig } from '../config/types.ts'
import type { Handler } from '../registry/define-handler.ts'
import { McpEndpoint } from '../protocol/endpoint.ts'
import type { RequestStateCodec } from '../protocol/stateless/request-state.ts'
import { RouteServerImpl } from '../protocol/route-server.ts'
import { mcp } from '../registry/components.ts'
import { Registry } from '../registry/registry.ts'
import type { SessionStore } from '../store/store.ts'
import type { StdioTransports } from '../upstream/connect.ts'
import { attachUpstreams } from '../upstream/attach.ts'
import { prepareOpenApi } from '../upstream/openapi/catalog.ts'
import { EdgeError } from '../wire/errors.ts'
import { attachSearch } from '../catalogue/search-mode.ts'
import { attachInclude, type VirtualRoute } from '../catalogue/virtual-route.ts'
import type { CredentialContext } from '../upstream/credentials/context.ts'
import { filterPhaseOf, rewritePhaseOf, type PhaseModules } from '../phases/load-phases.ts'
import { ApprovalGate, registryLookup } from '../phases/approval-gate.ts'
import { proxyToolLookup } from '../upstream/approval-lookup.ts'

/**
 * Builds the endpoint of `route` and runs `handler`'s setup on it; a proxy route gets its upstreams
 * (stdio ones through `stdio`). Throws what the setup throws (after closing it).
 */
export async function buildEndpoint(route: RouteConfig, handler: Handler, store: SessionStore, logger: Logger, codec: RequestStateCodec, stdio?: StdioTransports, credentials?: CredentialContext, phases?: PhaseModules): Promise<McpEndpoint> {
  const endpoint = new McpEndpoint(route, new Registry({ pagination: route.pagination }), store, logger.child({ route: route.location }), codec)
  endpoint.rewrite = rewritePhaseOf(route, phases, endpoint.logger)
  endpoint.filter = filterPhaseOf(route, phases, endpoint.logger)
  try {
    await handler.setup(mcp, new RouteServerImpl(endpoint))
    // REST APIs' documents are loaded (and their tools built) before the route serves.
    if (route.upstreams.length > 0) await prepareOpenApi(route)
    const proxy = route.upstreams.length > 0 ? attachUpstreams(endpoint, stdio, credentials) : undefined
    // Over the route's tools/call, the proxy's included: the upstream never sees an unapproved call.
    // A virtual route's tools/call is made once every route is built: its gate goes on then (virtualRoutes).
    if (route.approval !== undefined && route.include.length === 0) {
      const gate = new ApprovalGate(route.location, route.approval, proxy === undefined ? registryLookup : proxyToolLookup(proxy), store.tasks, endpoint.logger)
      endpoint.wrapMethod('tools/call', (inner) => gate.wrap(inner))
    }
    // A virtual route's methods come once every route is built (virtualRoutes); search is laid over them then.
    if (route.catalogue === 'search' && route.include.length === 0) attachSearch(endpoint)
  } catch (error) {
    endpoint.close()
    throw error
  }
  endpoint.setupDone()
  return endpoint
}

/**
 * Makes the virtual routes (`include:`) of `endpoints` (every route built): their sources are other
 * routes' tools and upstreams, which exist only now. Search mode is laid over them afterwards.
 */
export function virtualRoutes(endpoints: ReadonlyMap<string, McpEndpoint>): void {
  for (const endpoint of endpoints.values()) {
    if (endpoint.route.include.length === 0) continue
    let virtual: VirtualRoute
    try {
      virtual = attachInclude(endpoint, endpoints)
    } catch (error) {
      // Two sources (or a source and the route's own handler) giving one name, without a prefix.
      throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `route ${endpoint.route.location}: include: ${(error as Error).message}`)
    }
    const approval = endpoint.route.approval
    if (approval !== undefined) {
      const gate = new ApprovalGate(endpoint.route.location, approval, virtual.toolLookup, endpoint.store.tasks, endpoint.logger)
      endpoint.wrapMethod('tools/call', (inner) => gate.wrap(inner))
    }
    if (endpoint.route.catalogue === 'search') attachSearch(endpoint)
  }
}

/** What a route whose setup failed is called in the error: its handler module, or its proxy. */
export function setupFailure(route: { location: string; handler?: string | undefined }, reason: string): string {
  return `route ${route.location}: ${route.handler === undefined ? 'proxy setup' : `${route.handler}: handler setup`} failed: ${reason}`
}
