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

/** Builds the endpoint of `route` and runs `handler`'s setup on it; throws what the setup throws (after closing it). */
export async function buildEndpoint(route: RouteConfig, handler: Handler, store: SessionStore, logger: Logger, codec: RequestStateCodec): Promise<McpEndpoint> {
  const endpoint = new McpEndpoint(route, new Registry({ pagination: route.pagination }), store, logger.child({ route: route.location }), codec)
  try {
    await handler.setup(mcp, new RouteServerImpl(endpoint))
  } catch (error) {
    endpoint.close()
    throw error
  }
  endpoint.setupDone()
  return endpoint
}
