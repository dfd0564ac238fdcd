/**
 * Makes an endpoint a proxy route: its upstreams' forwarding methods over the route's own, their
 * sessions ended with the downstream session's, their health in /readyz.
 */
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { StdioTransports } from './connect.ts'
import { proxyMethods } from './proxy-methods.ts'
import { ProxyRoute } from './proxy-route.ts'
import { stdioUpstreams } from './stdio-upstreams.ts'

/**
 * Attaches `endpoint.route.upstreams`, stdio ones in this worker's pools (or `stdio`, given by a
 * test); throws when a stdio upstream's command or pool is invalid.
 */
export function attachUpstreams(endpoint: McpEndpoint, stdio?: StdioTransports): ProxyRoute {
  const proxy = new ProxyRoute(endpoint, stdio ?? stdioUpstreams(endpoint.route.upstreams, endpoint.logger))
  endpoint.extend(proxy, proxyMethods(proxy))
  return proxy
}
