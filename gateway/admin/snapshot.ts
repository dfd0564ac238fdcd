/**
 * What the admin API shows, as data: one process's view of its gateway (`snapshotOf`), and the whole
 * gateway's from several workers' (`mergeSnapshots`: counters summed, an upstream down when any
 * worker finds it down, sessions from the shared store, the newest errors first). The tallies are the
 * call events' (events/call-events.ts), the same numbers the metrics carry.
 */
import { createHash } from 'node:crypto'
import { CALL_BUCKETS, ERROR_RING_SIZE, type CallEvent, type Tally } from '../events/call-events.ts'
import type { Gateway } from '../server/server.ts'
import type { UpstreamStatus } from '../upstream/proxy-route.ts'

export interface ToolView { name: string; title?: string; description?: string; inputSchema?: unknown }

export interface RouteView {
  location: string
  kind: 'handler' | 'proxy'
  transports: string[]
  /** The route's own tools (a proxy route's upstream tools are listed through its endpoint: /api/try). */
  tools: ToolView[]
  prompts: string[]
  resources: string[]
  templates: string[]
  upstreams: string[]
}

export interface CountsView {
  calls: number
  errors: Record<string, number>
  /** Per latency bucket (CALL_BUCKETS, the last above them all), not cumulative. */
  buckets: number[]
  sumSeconds: number
}

export interface CallRow extends CountsView { route: string; method: string; component: string }
export interface UpstreamView extends UpstreamStatus, CountsView { route: string }

export interface GatewaySnapshot {
  /** Processes this view is made of, and each one's pid and config generation. */
  workers: Array<{ pid: number; generation: number }>
  /** A digest of the config being served (workers that disagree: every digest, comma-separated). */
  digest: string
  /** Where the gateway's routes are served (the try-it panel's client connects there). */
  url: string
  routes: RouteView[]
  upstreams: UpstreamView[]
  sessions: Record<string, number>
  calls: CallRow[]
  errors: CallEvent[]
  buckets: readonly number[]
  at: number
}

function counts(tally: Tally | undefined): CountsView {
  if (tally === undefined) return { calls: 0, errors: {}, buckets: new Array<number>(CALL_BUCKETS.length + 1).fill(0), sumSeconds: 0 }
  return { calls: tally.calls, errors: Object.fromEntries(tally.errors), buckets: [...tally.buckets], sumSeconds: tally.sumSeconds }
}

/** The digest of a config: its normalised form, hashed (16 hex digits). */
export function configDigest(config: Gateway['config']): string {
  return createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 16)
}

/** Every page of a registry list (the route's `pagination` cuts them as it cuts a client's). */
function allPages<F extends string, D>(page: (cursor: string | undefined) => { readonly [K in F]: readonly D[] } & { readonly nextCursor?: string }, field: F): D[] {
  const items: D[] = []
  let cursor: string | undefined
  do {
    const listed = page(cursor)
    items.push(...listed[field])
    cursor = listed.nextCursor
  } while (cursor !== undefined)
  return items
}

/** This process's view of `gateway`, served at `url`. */
export async function snapshotOf(gateway: Gateway, url: string): Promise<GatewaySnapshot> {
  const routes: RouteView[] = []
  const sessions: Record<string, number> = {}
  for (const route of gateway.config.routes) {
    const endpoint = gateway.endpoints.get(route.location)
    const registry = endpoint?.registry
    routes.push({
      location: route.location,
      kind: route.upstreams.length > 0 ? 'proxy' : 'handler',
      transports: [...route.transports],
      tools: registry === undefined ? [] : allPages((cursor) => registry.listTools(cursor), 'tools').map((tool) => ({ name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema })),
      prompts: registry === undefined ? [] : allPages((cursor) => registry.listPrompts(cursor), 'prompts').map((prompt) => prompt.name),
      resources: registry === undefined ? [] : allPages((cursor) => registry.listResources(cursor), 'resources').map((resource) => resource.uri),
      templates: registry === undefined ? [] : allPages((cursor) => registry.listResourceTemplates(cursor), 'resourceTemplates').map((template) => template.uriTemplate),
      upstreams: route.upstreams.map((upstream) => upstream.name),
    })
    sessions[route.location] = await gateway.store.count(route.location).catch(() => -1)
  }
  const calls: CallRow[] = []
  const upstreams: UpstreamView[] = []
  const statuses = gateway.upstreams()
  for (const [route, tallies] of gateway.events.routes) {
    for (const [key, tally] of tallies.tallies) {
      const cut = key.indexOf('\0')
      calls.push({ route, method: key.slice(0, cut), component: key.slice(cut + 1), ...counts(tally) })
    }
  }
  for (const [route, list] of statuses) {
    for (const status of list) upstreams.push({ route, ...status, ...counts(gateway.events.routes.get(route)?.upstreams.get(status.name)) })
  }
  return {
    workers: [{ pid: process.pid, generation: gateway.generation }],
    digest: configDigest(gateway.config),
    url,
    routes,
    upstreams,
    sessions,
    calls,
    errors: gateway.events.recentErrors(),
    buckets: CALL_BUCKETS,
    at: Date.now(),
  }
}

function add(into: CountsView, from: CountsView): void {
  into.calls += from.calls
  into.sumSeconds += from.sumSeconds
  from.buckets.forEach((value, i) => (into.buckets[i] = (into.buckets[i] ?? 0) + value))
  for (const [kind, value] of Object.entries(from.errors)) into.errors[kind] = (into.errors[kind] ?? 0) + value
}

/** The whole gateway from its workers' views. */
export function mergeSnapshots(parts: readonly GatewaySnapshot[]): GatewaySnapshot {
  if (parts.length === 1) return parts[0]!
  const first = parts[0]!
  const calls = new Map<string, CallRow>()
  const upstreams = new Map<string, UpstreamView>()
  const sessions: Record<string, number> = {}
  for (const part of parts) {
    for (const row of part.calls) {
      const key = `${row.route}\0${row.method}\0${row.component}`
      const held = calls.get(key)
      if (held === undefined) calls.set(key, { ...row, errors: { ...row.errors }, buckets: [...row.buckets] })
      else add(held, row)
    }
    for (const row of part.upstreams) {
      const key = `${row.route}\0${row.name}`
      const held = upstreams.get(key)
      if (held === undefined) {
        upstreams.set(key, { ...row, errors: { ...row.errors }, buckets: [...row.buckets] })
        continue
      }
      add(held, row)
      held.reconnects += row.reconnects
      if (row.children !== undefined) held.children = (held.children ?? 0) + row.children
      if (row.restarts !== undefined) held.restarts = (held.restarts ?? 0) + row.restarts
      // Down anywhere is down; unknown only while no worker knows.
      if (row.state === 'down' || (held.state === 'unknown' && row.state === 'up')) {
        held.state = row.state
        held.since = row.since
        if (row.reason !== undefined) held.reason = row.reason
        else delete held.reason
      }
    }
    // The store is shared: every worker counts the same sessions.
    for (const [route, count] of Object.entries(part.sessions)) sessions[route] = Math.max(sessions[route] ?? -1, count)
  }
  const digests = [...new Set(parts.map((part) => part.digest))]
  return {
    workers: parts.flatMap((part) => part.workers),
    digest: digests.join(','),
    url: first.url,
    routes: first.routes,
    upstreams: [...upstreams.values()],
    sessions,
    calls: [...calls.values()],
    errors: parts.flatMap((part) => part.errors).sort((a, b) => b.at - a.at).slice(0, ERROR_RING_SIZE),
    buckets: first.buckets,
    at: Date.now(),
  }
}
