/**
 * Makes an endpoint a proxy route: its upstreams' forwarding methods over the route's own, their
 * sessions ended with the downstream session's, their health in /readyz.
 */
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { StdioTransports } from './connect.ts'
import { proxyMethods } from './proxy-methods.ts'
import { ProxyRoute } from './proxy-route.ts'

/** Attaches `endpoint.route.upstreams`; throws when a stdio upstream has no pool to run in. */
export function attachUpstreams(endpoint: McpEndpoint, stdio: StdioTransports | undefined): ProxyRoute {
  const missing = endpoint.route.upstreams.find((upstream) => upstream.url === undefined && stdio === undefined)
  if (missing !== undefined) throw new Error(`upstream ${missing.name}: stdio upstreams need the stdio pool, which this build does not have`)
  const proxy = new ProxyRoute(endpoint, stdio)
  endpoint.extend(proxy, proxyMethods(proxy))
  return proxy
}
