/**
 * Makes an endpoint a proxy route: its upstreams' forwarding methods over the route's own, their
 * sessions ended with the downstream session's, their health in /readyz.
 */
import type { McpEndpoint } from '../protocol/endpoint.ts'
import type { StdioTransports } from './connect.ts'
import type { CredentialContext } from './credentials/context.ts'
import { proxyMethods } from './proxy-methods.ts'
import { ProxyRoute } from './proxy-route.ts'
import { StdioPools } from './stdio-pools.ts'

/**
 * Attaches `endpoint.route.upstreams`, stdio ones in this worker's pools (or `stdio`, given by a
 * test); throws when a stdio upstream's command or pool is invalid.
 */
export function attachUpstreams(endpoint: McpEndpoint, stdio?: StdioTransports, credentials?: CredentialContext): ProxyRoute {
  const hasStdio = endpoint.route.upstreams.some((upstream) => upstream.command !== undefined)
  // `cwd` is already absolute (the config's folder resolved it), so the base folder is not used.
  const pools = stdio ?? (hasStdio ? new StdioPools({ log: endpoint.logger, baseDir: process.cwd() }) : undefined)
  // A bad command or pool fails the start here, not on the first request.
  if (pools instanceof StdioPools) for (const upstream of endpoint.route.upstreams) if (upstream.command !== undefined) pools.pool(upstream)
  const proxy = new ProxyRoute(endpoint, pools, credentials)
  endpoint.extend(proxy, proxyMethods(proxy))
  // Children start with the gateway (its health watching them), so a slow start is over by the first list.
  if (pools?.prestart !== undefined) for (const upstream of endpoint.route.upstreams) if (upstream.command !== undefined) pools.prestart(upstream)
  return proxy
}
