/**
 * Where `/metrics` is served: on the gateway's port beside the routes, or only on its own address
 * (`metrics.listen`, e.g. an interface the scraper alone reaches). Either way the Host header is
 * checked like a route's (loopback, else `metrics.allowed_hosts`): after DNS rebinding a browser
 * must not read it.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../config/types.ts'
import { EdgeError } from '../wire/errors.ts'
import { replyError } from '../transport/reply-error.ts'
import type { GatewayMetrics } from './metrics.ts'
import { OriginPolicy } from './origin-check.ts'

/** Adds the metrics route to `app`, behind the Host check. */
export function registerMetricsRoute(app: FastifyInstance, config: GatewayConfig['metrics'], metrics: GatewayMetrics): void {
  const policy = new OriginPolicy(config.allowed_hosts)
  app.get(config.path, (request, reply) => {
    const origin = request.headers.origin
    if (!policy.allows(request.headers.host, Array.isArray(origin) ? origin[0] : origin)) {
      return replyError(reply, new EdgeError('MCP_EDGE_FORBIDDEN_ORIGIN'))
    }
    return metrics.scrape().then((text) => reply.type(metrics.contentType).send(text))
  })
}

/** A separate listener serving only the metrics route; the caller listens and closes it. */
export function buildMetricsApp(config: GatewayConfig['metrics'], metrics: GatewayMetrics): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true })
  registerMetricsRoute(app, config, metrics)
  return app
}
