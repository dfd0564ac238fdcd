/**
 * The admin listener (`admin.listen`): JSON under /api/ and the dashboard at /, read-only unless the
 * config says otherwise. Every answer is read from an AdminSource: one process's gateway, or under
 * the cluster the primary's merge of every worker's (cluster-admin.ts), so it shows the whole gateway.
 *
 *   GET  /api/overview   workers, config generation(s) and digest, totals
 *   GET  /api/routes     routes with their components and upstreams
 *   GET  /api/upstreams  upstreams: health, last error, reconnects, stdio children, calls
 *   GET  /api/sessions   live sessions per route
 *   GET  /api/stats      per (route, method, component) calls, errors by kind, latency buckets
 *   GET  /api/errors     the recent failed calls (a bounded ring per process)
 *   POST /api/reload     the same safe reload as SIGHUP (admin.reload: true), else 403
 *   POST /api/try        the try-it panel: tools/list or tools/call through the route's endpoint
 *   GET  /, /assets/*    the dashboard
 */
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import type { AdminConfig } from '../config/types.ts'
import { replyError } from '../transport/reply-error.ts'
import { EdgeCode, EdgeError } from '../wire/errors.ts'
import { AdminAuth } from './admin-auth.ts'
import type { GatewaySnapshot } from './snapshot.ts'
import { tryIt, type TryRequest } from './try-it.ts'

/** Where the admin API reads the gateway, and how it reloads it. */
export interface AdminSource {
  snapshot(): Promise<GatewaySnapshot>
  reload(): Promise<{ ok: boolean; problems: string[]; detail?: string }>
}

/** Largest body the admin API reads (a try-it call's arguments). */
export const ADMIN_BODY_LIMIT = 64 * 1024

/** The dashboard's files: beside this module in the source tree; a built package finds them under gateway/admin/. */
function dashboardDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  return path.basename(path.dirname(here)) === 'dist' ? path.resolve(here, '../../gateway/admin/dashboard') : path.join(here, 'dashboard')
}

const ASSET_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.html': 'text/html; charset=utf-8' }

/** The files the dashboard may load: its own, and uPlot from the installed package (no CDN). */
function assetPath(name: string): string | undefined {
  if (name === 'uPlot.esm.js' || name === 'uPlot.min.css') {
    const require = createRequire(import.meta.url)
    return path.join(path.dirname(require.resolve('uplot/package.json')), 'dist', name)
  }
  return /^[a-z-]+\.(js|css)$/.test(name) ? path.join(dashboardDir(), name) : undefined
}

/** `source` whose concurrent snapshot requests share one (the dashboard asks six endpoints at once; under the cluster each is an IPC round). */
function coalesced(source: AdminSource): AdminSource {
  let pending: Promise<GatewaySnapshot> | undefined
  return {
    snapshot: () => (pending ??= source.snapshot().finally(() => (pending = undefined))),
    reload: () => source.reload(),
  }
}

export function buildAdminApp(config: AdminConfig, given: AdminSource): FastifyInstance {
  const source = coalesced(given)
  const app = Fastify({ logger: false, bodyLimit: ADMIN_BODY_LIMIT, forceCloseConnections: true })
  const auth = new AdminAuth(config)
  app.addHook('onRequest', async (request, reply) => {
    try {
      await auth.check(request.headers)
    } catch (error) {
      return replyError(reply, error instanceof EdgeError ? error : new EdgeError('MCP_EDGE_ADMIN_UNAUTHORIZED'))
    }
    reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff')
  })
  app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
    if (error instanceof EdgeError) return replyError(reply, error)
    // Fastify's own refusals (a malformed body, one over ADMIN_BODY_LIMIT) keep their status; anything else is ours.
    const status = error.statusCode ?? EdgeCode.MCP_EDGE_INTERNAL.status
    if (status < EdgeCode.MCP_EDGE_INTERNAL.status) return replyError(reply, new EdgeError('MCP_EDGE_INVALID_REQUEST', error.message, { status }))
    return replyError(reply, new EdgeError('MCP_EDGE_INTERNAL'))
  })

  app.get('/api/overview', async () => {
    const snapshot = await source.snapshot()
    let calls = 0
    let errors = 0
    for (const row of snapshot.calls) {
      calls += row.calls
      for (const count of Object.values(row.errors)) errors += count
    }
    return {
      workers: snapshot.workers,
      generations: [...new Set(snapshot.workers.map((worker) => worker.generation))],
      digest: snapshot.digest,
      routes: snapshot.routes.length,
      upstreams: { total: snapshot.upstreams.length, down: snapshot.upstreams.filter((upstream) => upstream.state === 'down').length },
      sessions: Object.values(snapshot.sessions).reduce((sum, count) => sum + Math.max(count, 0), 0),
      calls,
      errors,
      reload: config.reload,
      tryIt: config.try_it,
      at: snapshot.at,
    }
  })
  app.get('/api/routes', async () => ({ routes: (await source.snapshot()).routes }))
  app.get('/api/upstreams', async () => ({ upstreams: (await source.snapshot()).upstreams }))
  app.get('/api/sessions', async () => ({ sessions: (await source.snapshot()).sessions }))
  app.get('/api/stats', async () => {
    const snapshot = await source.snapshot()
    return { at: snapshot.at, buckets: snapshot.buckets, calls: snapshot.calls, upstreams: snapshot.upstreams.map(({ route, name, state, calls, errors, buckets, sumSeconds }) => ({ route, name, state, calls, errors, buckets, sumSeconds })) }
  })
  app.get('/api/errors', async () => ({ errors: (await source.snapshot()).errors }))
  app.post('/api/reload', async (_request, reply) => {
    if (!config.reload) return replyError(reply, new EdgeError('MCP_EDGE_ADMIN_READ_ONLY', 'Forbidden: POST /api/reload needs admin.reload: true'))
    const outcome = await source.reload()
    if (!outcome.ok) return replyError(reply, new EdgeError('MCP_EDGE_ADMIN_RELOAD_FAILED', undefined, { data: outcome }))
    return outcome
  })
  app.post('/api/try', async (request, reply) => {
    if (!config.try_it) return replyError(reply, new EdgeError('MCP_EDGE_ADMIN_READ_ONLY', 'Forbidden: the try-it panel needs admin.try_it: true'))
    const body = request.body as Partial<TryRequest> | undefined
    if (typeof body !== 'object' || body === null || typeof body.route !== 'string') return replyError(reply, new EdgeError('MCP_EDGE_INVALID_REQUEST', 'Invalid Request: the body is {route, method, name?, arguments?}'))
    if (body.arguments !== undefined && (typeof body.arguments !== 'object' || body.arguments === null || Array.isArray(body.arguments))) {
      return replyError(reply, new EdgeError('MCP_EDGE_INVALID_REQUEST', 'Invalid Request: arguments must be an object'))
    }
    const snapshot = await source.snapshot()
    return tryIt(snapshot.url, snapshot.routes.map((route) => route.location), body as TryRequest)
  })

  app.get('/', async (_request, reply) => reply.type(ASSET_TYPES['.html']!).send(await readFile(path.join(dashboardDir(), 'index.html'))))
  app.get('/assets/:name', async (request, reply) => {
    const name = (request.params as { name: string }).name
    const file = assetPath(name)
    const body = file === undefined ? undefined : await readFile(file).catch(() => undefined)
    if (body === undefined) return replyError(reply, new EdgeError('MCP_EDGE_ADMIN_NOT_FOUND'))
    return reply.type(ASSET_TYPES[path.extname(file!)] ?? 'application/octet-stream').send(body)
  })
  app.setNotFoundHandler((_request, reply) => replyError(reply, new EdgeError('MCP_EDGE_ADMIN_NOT_FOUND')))
  return app
}
