/**
 * The method table of a proxy route, laid over the route's own: lists aggregate the local registry
 * and every upstream; a call goes to the local component when the name is local, else to the
 * upstream the name or URI leads to. Methods the route's capabilities switch off stay absent.
 *
 *   tools/call "docs__search" ─► local tool? ─► no ─► index/name ─► docs "search" ─► result | isError "unavailable"
 *   resources/read uri        ─► local? ─► no ─► listed URI or template match ─► upstream (URI unchanged)
 */
import { ConsentRequiredError, CredentialError } from './credentials/provider.ts'
import { openCaller, type Caller } from '../wire/caller.ts'
import { RpcError, TimeoutError } from '../client/errors.ts'
import { McpError, RpcCode } from '../wire/errors.ts'
import type { RequestContext } from '../registry/context.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { completionMethods } from '../protocol/methods/completion.ts'
import type { MethodHandler, MethodHost, MethodTable } from '../protocol/methods/index.ts'
import { loggingMethods } from '../protocol/methods/logging.ts'
import { checkScopes, hiddenOf } from '../protocol/methods/params.ts'
import { promptMethods } from '../protocol/methods/prompts.ts'
import { keepSubscription, resourceMethods, subscriptionMethods } from '../protocol/methods/resources.ts'
import { checkSubscriptionUri } from '../protocol/session-limits.ts'
import { markCached, toolMethods } from '../protocol/methods/tools.ts'
import type { SessionRecord } from '../store/store.ts'
import { decodeCursor, encodeCursor, fanOut, LIST_METHOD, META_UNAVAILABLE, type AggregateCursor, type ListKind } from './aggregate.ts'
import { cachedPage, LIST_HIT_DEADLINE_MS, ListHints, pageHints } from './list-cache-hints.ts'
import type { CachedPage } from './list-cache.ts'
import { answerKey } from './list-answers.ts'
import { keepAnswer, readyAnswer } from './list-ready.ts'
import { resultCacheTtl } from './result-cache-ttl.ts'
import { keepHints } from '../wire/cache-hints.ts'
import { describeFailure, isUnavailability } from './failure.ts'
import type { UpstreamHealth } from './health.ts'
import { callUpstreamTask, proxiedExecution, runAsGatewayTask, upstreamTaskSupport } from './upstream-tasks.ts'
import { headerParams } from '../protocol/stateless/headers.ts'
import { cancellationOf, type ForwardExtra, type ProxyRoute, type Target } from './proxy-route.ts'
import { isUnknownToolError, isUnknownToolResult, unknownTool } from './unknown-tool.ts'

/** Which server capability a list needs. */
const CAPABILITY: Readonly<Record<ListKind, 'tools' | 'prompts' | 'resources'>> = {
  tools: 'tools', prompts: 'prompts', resources: 'resources', resourceTemplates: 'resources',
}

/** The proxy's methods for every method `endpoint` serves today. */
export function proxyMethods(proxy: ProxyRoute): MethodTable {
  const table: MethodTable = {
    'tools/list': (_e, record, params, ctx) => aggregate(proxy, 'tools', record, params, ctx.caller),
    'prompts/list': (_e, record, params, ctx) => aggregate(proxy, 'prompts', record, params, ctx.caller),
    'resources/list': (_e, record, params, ctx) => aggregate(proxy, 'resources', record, params, ctx.caller),
    'resources/templates/list': (_e, record, params, ctx) => aggregate(proxy, 'resourceTemplates', record, params, ctx.caller),
    'tools/call': (endpoint, record, params, ctx) => {
      const name = stringParam(params.name, 'tools/call needs params.name (a string)')
      if (endpoint.viewOf(record).tool(name) !== undefined) return toolMethods['tools/call']!(endpoint, record, params, ctx)
      checkScopes(endpoint, ctx.caller, 'tool', name)
      return callTool(proxy, record, name, params, ctx)
    },
    'prompts/get': async (endpoint, record, params, ctx) => {
      const name = stringParam(params.name, 'prompts/get needs params.name (a string)')
      if (endpoint.viewOf(record).prompt(name) !== undefined) return promptMethods['prompts/get']!(endpoint, record, params, ctx)
      checkScopes(endpoint, ctx.caller, 'prompt', name)
      const target = await resolve(proxy, record, 'prompt', name, params, ctx.caller)
      if (target === undefined) throw new McpError(RpcCode.InvalidParams, `Unknown prompt: ${name}`)
      return proxy.passThrough(record, target, 'prompts/get', { ...params, name: target.name }, ctx)
    },
    'resources/read': async (endpoint, record, params, ctx) => {
      const uri = stringParam(params.uri, 'resources/read needs params.uri (a string)')
      const view = endpoint.viewOf(record)
      if (view.resolveResource(uri, hiddenOf(endpoint, view, record, ctx.caller)) !== undefined) return resourceMethods['resources/read']!(endpoint, record, params, ctx)
      const upstream = await resolveUri(proxy, record, uri, params, ctx.caller)
      if (upstream === undefined) throw new McpError(RpcCode.ResourceNotFound, `Resource not found: ${uri}`, { uri })
      return proxy.passThrough(record, { upstream, name: uri }, 'resources/read', params, ctx)
    },
    'resources/subscribe': (endpoint, record, params, ctx) => subscription(proxy, 'resources/subscribe', endpoint, record, params, ctx),
    'resources/unsubscribe': (endpoint, record, params, ctx) => subscription(proxy, 'resources/unsubscribe', endpoint, record, params, ctx),
    'completion/complete': async (endpoint, record, params, ctx) => {
      const ref = (params.ref ?? {}) as JsonObject
      const local = completionMethods['completion/complete']!
      if (ref.type === 'ref/prompt' && typeof ref.name === 'string' && endpoint.registry.prompt(ref.name) === undefined) {
        const target = await resolve(proxy, record, 'prompt', ref.name, params, ctx.caller)
        if (target !== undefined) return proxy.passThrough(record, target, 'completion/complete', { ...params, ref: { ...ref, name: target.name } }, ctx)
      }
      if (ref.type === 'ref/resource' && typeof ref.uri === 'string' && endpoint.registry.template(ref.uri) === undefined) {
        const upstream = proxy.resolveTemplate(ref.uri)
        if (upstream !== undefined) return proxy.passThrough(record, { upstream, name: ref.uri }, 'completion/complete', params, ctx)
      }
      return local(endpoint, record, params, ctx)
    },
    'logging/setLevel': async (endpoint, record, params, ctx) => {
      const result = await loggingMethods['logging/setLevel']!(endpoint, record, params, ctx)
      // Every upstream session this downstream session has; the ones opened later get it on initialize.
      await Promise.all(Object.entries(record.upstreams ?? {}).map(async ([name, session]) => {
        if (session.capabilities.logging === undefined || !proxy.upstreams.has(name)) return
        await proxy.forward(record, name, 'logging/setLevel', { level: params.level as string }, undefined, { who: ctx.caller }).catch((error: unknown) => {
          proxy.endpoint.logger.warn({ upstream: name, reason: describeFailure(error) }, 'could not forward logging/setLevel')
        })
      }))
      return result
    },
  }
  const served: MethodTable = {}
  for (const [method, handler] of Object.entries(table)) if (proxy.endpoint.method(method) !== undefined) served[method] = handler
  return served
}

/**
 * One page of an aggregated list: the local registry's part, then each upstream's, in config order.
 * A page this worker made from cached pages alone and that is still current is sent as it was made.
 */
async function aggregate(proxy: ProxyRoute, kind: ListKind, record: SessionRecord, params: JsonObject, caller: Caller, who: Caller | undefined = caller): Promise<JsonObject> {
  const cursor: AggregateCursor | undefined = params.cursor === undefined ? undefined : decodeCursor(params.cursor, proxy.names)
  const items: JsonObject[] = []
  const next: AggregateCursor = { u: {} }
  const meta = params._meta as JsonObject | undefined
  const local = cursor === undefined || cursor.l !== undefined ? localPage(proxy.endpoint, kind, cursor?.l, record, caller) : undefined
  // Lists made to learn where names lead (caller is not who) are never kept nor served ready.
  const answerKeyOf = caller === who && proxy.listCache !== undefined ? answerKey(kind, params.cursor as string | undefined, caller.scopes, proxy.endpoint.scopes !== undefined) : undefined
  if (answerKeyOf !== undefined) {
    const ready = await readyAnswer(proxy, answerKeyOf, who?.principal, local?.page, record)
    if (ready !== undefined) return ready
  }
  if (local !== undefined) {
    const page = local.page as { nextCursor?: string } & Record<string, unknown>
    items.push(...(page[kind] as JsonObject[]))
    if (page.nextCursor !== undefined) next.l = page.nextCursor
  }
  const unavailable: string[] = []
  const asks = []
  const hits: CachedPage[] = []
  const names = cursor === undefined ? [...proxy.names] : Object.keys(cursor.u)
  // One store read for every upstream's page (list-cache.ts); a hit asks no upstream. A store that
  // cannot be read is no reason to fail a list the upstreams can answer: it goes uncached.
  const lookup = proxy.listCache === undefined ? undefined : await proxy.listCache.lookup(kind, names.map((name) => ({ name, cursor: cursor?.u[name] })), who?.principal).catch((error: unknown) => {
    proxy.endpoint.logger.warn({ err: error, list: kind }, 'list cache: the store could not be read; the list asks the upstreams')
    return undefined
  })
  const hints = new ListHints()
  for (const name of names) {
    const health = proxy.health.get(name)!
    // An upstream still starting (not available yet since the gateway started) is waited for, within its start_wait.
    const startingMs = health.startingMs()
    if (health.state === 'down' && startingMs === 0) {
      unavailable.push(name)
      continue
    }
    const hit = lookup?.hits.get(name)
    if (hit !== undefined) {
      hits.push(hit)
      hints.add({ ttlMs: Math.max(0, hit.expiresAt - Date.now()), scope: hit.scope })
      asks.push({ name, deadlineMs: LIST_HIT_DEADLINE_MS, page: () => Promise.resolve(cachedPage(kind, hit)) })
      continue
    }
    const capabilities = proxy.link(record, proxy.upstreams.get(name)!).server?.capabilities ?? record.upstreams?.[name]?.capabilities
    if (capabilities !== undefined && capabilities[CAPABILITY[kind]] === undefined) continue
    const upstream = proxy.upstreams.get(name)!
    const deadlineMs = upstream.list_timeout * 1000
    const upstreamCursor = cursor?.u[name]
    // A stateless request's envelope (`_meta`) goes along: a stateless upstream needs it.
    const upstreamParams: JsonObject = meta === undefined ? {} : { _meta: meta }
    if (upstreamCursor !== undefined) upstreamParams.cursor = upstreamCursor
    const perPrincipal = proxy.credentials(upstream).perPrincipal
    const ask = (timeoutMs: number): Promise<JsonObject> => proxy.forward(record, name, LIST_METHOD[kind], upstreamParams, undefined, { timeoutMs, who }).then((result) => {
      hints.add(lookup === undefined ? pageHints(result, perPrincipal) : proxy.listCache!.keep(kind, name, upstreamCursor, result, lookup, perPrincipal))
      return result
    })
    if (startingMs === 0) asks.push({ name, deadlineMs, page: () => ask(deadlineMs) })
    else asks.push({ name, deadlineMs: startingMs + deadlineMs, page: () => askStarting(health, deadlineMs, ask) })
  }
  const seen = new Set(items.map((item) => String(item.name ?? item.uri ?? item.uriTemplate)))
  for (const page of await fanOut(asks, kind)) {
    if ('failure' in page) {
      // An upstream without this list (method not found) has nothing to add; anything else is an outage.
      if (page.failure instanceof RpcError && page.failure.code === RpcCode.MethodNotFound) continue
      unavailable.push(page.name)
      continue
    }
    proxy.learn(kind, page.name, page.items)
    for (const item of page.items) {
      const exposed = expose(proxy, kind, page.name, item)
      if (exposed === undefined || !allowed(proxy.endpoint, kind, exposed, caller)) continue
      const key = String(exposed.name ?? exposed.uri ?? exposed.uriTemplate)
      if (seen.has(key)) {
        proxy.endpoint.logger.error({ upstream: page.name, name: key, list: kind }, 'two upstreams offer the same name; the first one keeps it')
        continue
      }
      seen.add(key)
      items.push(exposed)
    }
    if (page.nextCursor !== undefined) next.u[page.name] = page.nextCursor
  }
  const result: JsonObject = { [kind]: items }
  if (next.l !== undefined || Object.keys(next.u).length > 0) result.nextCursor = encodeCursor(next)
  if (unavailable.length > 0) result._meta = { [META_UNAVAILABLE]: unavailable }
  // What a 2026-07-28 client is told about caching this answer (protocol/stateless/dispatch.ts narrows the route's own hints by it).
  keepHints(result, hints.of(unavailable.length > 0, proxy.endpoint.scopes !== undefined))
  // Every upstream's page from the cache, the route's own page the shared one: the same list for the next caller with this key.
  if (answerKeyOf !== undefined && lookup !== undefined && hits.length === names.length && names.length > 0 && unavailable.length === 0 && local?.shared !== false) {
    keepAnswer(proxy, answerKeyOf, result, names, hits, lookup, local?.page, who?.principal)
  }
  return result
}

/**
 * One list page of an upstream that has not been available yet since the gateway started: asked
 * with the rest of its start wait to answer (a child still installing); when it cannot be reached,
 * the page waits for it to come up (its probe, or its pool, says so) within that wait, then asks.
 */
async function askStarting(health: UpstreamHealth, deadlineMs: number, ask: (timeoutMs: number) => Promise<JsonObject>): Promise<JsonObject> {
  if (health.state !== 'down') {
    try {
      return await ask(Math.max(deadlineMs, health.startingMs()))
    } catch (error) {
      if (!isUnavailability(error) || health.startingMs() === 0) throw error
    }
  }
  const waitMs = health.startingMs()
  if (!(await health.whenAvailable(waitMs))) throw new TimeoutError(`${health.name} did not become available within its start wait`, waitMs)
  return ask(deadlineMs)
}

/** An upstream's item under its exposed name (tools and prompts), or undefined when the filters hide it. */
function expose(proxy: ProxyRoute, kind: ListKind, upstream: string, item: JsonObject): JsonObject | undefined {
  if (kind !== 'tools' && kind !== 'prompts') return item
  if (typeof item.name !== 'string') return undefined
  const exposed = kind === 'tools' ? proxy.naming.tool(upstream, item.name) : proxy.naming.prompt(upstream, item.name)
  if (exposed === undefined) return undefined
  if (kind === 'prompts') {
    proxy.promptIndex.set(exposed, { upstream, name: item.name })
    return exposed === item.name ? item : { ...item, name: exposed }
  }
  const annotated = typeof item.inputSchema === 'object' && item.inputSchema !== null ? headerParams(item.inputSchema as JsonObject) : undefined
  const origin: { upstream: string; name: string; paramHeaders?: ReadonlyMap<string, string>; taskRequired?: true; destructive?: true; cacheTtlMs?: number } = { upstream, name: item.name }
  if (annotated?.size) origin.paramHeaders = annotated
  if (upstreamTaskSupport(item) === 'required') origin.taskRequired = true
  if ((item.annotations as JsonObject | undefined)?.destructiveHint === true) origin.destructive = true
  const cacheTtlMs = resultCacheTtl(proxy, upstream, item)
  if (cacheTtlMs !== undefined) origin.cacheTtlMs = cacheTtlMs
  proxy.toolIndex.set(exposed, origin)
  const execution = proxiedExecution(item, proxy.endpoint.tasks !== undefined)
  if (exposed === item.name && execution === item.execution) return item
  const shown: JsonObject = { ...item, name: exposed }
  if (execution === undefined) delete shown.execution
  else shown.execution = execution
  return shown
}

/** False for an upstream item the caller lacks the scopes for (per-component scopes apply to exposed names). */
function allowed(endpoint: MethodHost, kind: ListKind, item: JsonObject, caller: Caller): boolean {
  if (endpoint.scopes === undefined) return true
  const [component, name] = kind === 'tools' ? ['tool', item.name] as const
    : kind === 'prompts' ? ['prompt', item.name] as const
    : kind === 'resources' ? ['resource', item.uri] as const
    : ['template', item.uriTemplate] as const
  return typeof name !== 'string' || endpoint.scopes.missing(component, name, caller.scopes) === undefined
}

/** The route's own part of a list; `shared` when it is the route's page every caller sees (nothing hidden, no session catalogue). */
function localPage(endpoint: MethodHost, kind: ListKind, cursor: string | undefined, record: SessionRecord, caller: Caller): { page: object; shared: boolean } {
  const registry = endpoint.viewOf(record)
  const hidden = hiddenOf(endpoint, registry, record, caller)
  const shared = hidden === undefined && registry === endpoint.registry
  switch (kind) {
    case 'tools': return { page: registry.listTools(cursor, hidden), shared }
    case 'prompts': return { page: registry.listPrompts(cursor, hidden), shared }
    case 'resources': return { page: registry.listResources(cursor, hidden), shared }
    case 'resourceTemplates': return { page: registry.listResourceTemplates(cursor, hidden), shared }
  }
}

/**
 * A tool call upstream; an unreachable upstream is an `isError` result the model can read, not a
 * protocol error. A name this worker knows goes up without waiting for a lookup.
 */
function callTool(proxy: ProxyRoute, record: SessionRecord, name: string, params: JsonObject, ctx: RequestContext): JsonObject | Promise<JsonObject> {
  const known = proxy.resolveName('tool', name)
  if (known !== undefined) return callTarget(proxy, record, known, params, ctx)
  return resolve(proxy, record, 'tool', name, params, ctx.caller).then((target) => {
    if (target === undefined) throw unknownTool(name)
    return callTarget(proxy, record, target, params, ctx)
  })
}

function callTarget(proxy: ProxyRoute, record: SessionRecord, target: Target, params: JsonObject, ctx: RequestContext): JsonObject | Promise<JsonObject> {
  // A read-only tool with `cache:` (resultCacheTtl): its result may be one kept for these arguments and caller.
  if (target.cacheTtlMs !== undefined && params.task === undefined) {
    return proxy.endpoint.results.through(String(params.name), target.cacheTtlMs, params, ctx, () => forwardCall(proxy, record, target, params, ctx), (cached) => markCached(ctx, cached))
  }
  // A client's task request is the gateway's to run (see upstream-tasks.ts); it never goes up as it is.
  if (params.task !== undefined && proxy.endpoint.tasks !== undefined) {
    return runAsGatewayTask(proxy.endpoint.tasks, String(params.name), params, record, ctx, (sent, taskCtx) => forwardCall(proxy, record, target, sent, taskCtx))
  }
  // Neither cached nor a task's: a session's result goes straight to the client, as the upstream wrote it when the route allows.
  return forwardCall(proxy, record, target, params, ctx, record.id !== '' && proxy.resultsAsSent)
}

/** `asSent`: the result goes to the client unread (ProxyRoute.resultsAsSent), so it may come back unparsed, in the upstream's text. */
async function forwardCall(proxy: ProxyRoute, record: SessionRecord, target: Target, params: JsonObject, ctx: RequestContext, asSent = false): Promise<JsonObject> {
  if (proxy.isDown(target.upstream)) return unavailableResult(target.upstream, proxy.health.get(target.upstream)?.reason)
  // A name the upstream knows as it is (no prefix, no renaming) goes up in the params as they came.
  let sent = params.name === target.name ? params : { ...params, name: target.name }
  if (sent.task !== undefined) {
    sent = { ...sent }
    delete sent.task
  }
  // An upstream task's result is the gateway's to read and follow (upstream-tasks.ts): not passed on as sent.
  if (target.taskRequired === true) asSent = false
  const extra = target.paramHeaders !== undefined ? { paramHeaders: paramHeaderValues(target, params.arguments), resultAsSent: asSent } : asSent ? AS_SENT : NO_EXTRA
  let result: JsonObject
  try {
    if (target.taskRequired === true) return await callUpstreamTask(proxy, record, target.upstream, sent, ctx, extra)
    result = await proxy.forward(record, target.upstream, 'tools/call', sent, ctx, extra)
  } catch (error) {
    // The gateway's own refusal on the way (a bound such as max_input_rounds) is the client's error as
    // it stands: the upstream answered, so calling it unavailable would be wrong.
    if (error instanceof RpcError && isUnknownToolError(error.code, error.message, target.name)) throw unknownTool(String(params.name))
    if (error instanceof McpError) throw error
    if (error instanceof RpcError || cancellationOf(ctx).aborted) throw proxy.asClientError(target.upstream, error)
    // Consent is asked through the protocol (a URL elicitation error); a credential that failed is this call's result.
    if (error instanceof ConsentRequiredError) throw proxy.asClientError(target.upstream, error)
    if (error instanceof CredentialError) return { content: [{ type: 'text', text: error.message }], isError: true }
    if (error instanceof TimeoutError) return timedOutResult(target.upstream, error.timeoutMs)
    return unavailableResult(target.upstream, describeFailure(error))
  }
  // An SDK-built upstream says "no such tool" as a tool result: the client gets the spec's -32602 (unknown-tool.ts).
  if (result.isError === true && isUnknownToolResult(result, target.name)) throw unknownTool(String(params.name))
  return result
}

const NO_EXTRA = Object.freeze({})
const AS_SENT: ForwardExtra = Object.freeze({ resultAsSent: true })

/** The `Mcp-Param-*` values a stateless upstream expects for this call, from the tool's annotations. */
function paramHeaderValues(target: Target, args: unknown): Record<string, string> | undefined {
  if (target.paramHeaders === undefined) return undefined
  const values = typeof args === 'object' && args !== null ? (args as JsonObject) : {}
  const headers: Record<string, string> = {}
  for (const [suffix, argument] of target.paramHeaders) {
    const value = values[argument]
    if (value !== undefined && value !== null) headers[suffix] = typeof value === 'string' ? value : JSON.stringify(value)
  }
  return headers
}

function unavailableResult(upstream: string, reason: string | undefined): JsonObject {
  const text = `The upstream server "${upstream}" is unavailable${reason === undefined ? '' : `: ${reason}`}. Try again later.`
  return { content: [{ type: 'text', text }], isError: true, _meta: { [META_UNAVAILABLE]: [upstream] } }
}

/** A call the upstream did not answer in time: this call's result (the upstream is not down for it, see ProxyRoute.#forwardOnce). */
function timedOutResult(upstream: string, timeoutMs: number): JsonObject {
  const text = `The upstream server "${upstream}" did not answer this call within ${timeoutMs / 1000} s (the upstream's timeout; a call that reports progress gets longer).`
  return { content: [{ type: 'text', text }], isError: true }
}

/** Lists read to learn where names lead, not to show anyone: no scope filter (a call is checked on its own). */
const LEARNING: Caller = openCaller('internal')

/** Where a tool or prompt name leads; a name no list taught this worker yet (hashed, renamed) is learnt by listing once. */
async function resolve(proxy: ProxyRoute, record: SessionRecord, kind: 'tool' | 'prompt', name: string, params: JsonObject, who: Caller | undefined): Promise<Target | undefined> {
  const known = proxy.resolveName(kind, name)
  if (known !== undefined) return known
  await aggregate(proxy, kind === 'tool' ? 'tools' : 'prompts', record, envelopeOf(params), LEARNING, who)
  return proxy.resolveName(kind, name)
}

/**
 * The upstream tool an exposed name leads to, as its upstream listed it (annotations included); a
 * name this worker has not seen listed yet is learnt by listing once. undefined: no upstream lists it.
 */
export async function listedTool(proxy: ProxyRoute, record: SessionRecord, name: string, params: JsonObject, who: Caller | undefined): Promise<Target | undefined> {
  const known = proxy.toolIndex.get(name)
  if (known !== undefined) return known
  await aggregate(proxy, 'tools', record, envelopeOf(params), LEARNING, who)
  return proxy.toolIndex.get(name)
}

async function resolveUri(proxy: ProxyRoute, record: SessionRecord, uri: string, params: JsonObject, who: Caller | undefined): Promise<string | undefined> {
  const known = proxy.resolveUri(uri)
  if (known !== undefined) return known
  await Promise.all([aggregate(proxy, 'resources', record, envelopeOf(params), LEARNING, who), aggregate(proxy, 'resourceTemplates', record, envelopeOf(params), LEARNING, who)])
  return proxy.resolveUri(uri)
}

/** subscribe/unsubscribe: kept in the session (as on any route), and forwarded to the upstream serving the URI. */
async function subscription(proxy: ProxyRoute, method: 'resources/subscribe' | 'resources/unsubscribe', endpoint: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
  const uri = stringParam(params.uri, `${method} needs params.uri (a string)`)
  const local: MethodHandler = subscriptionMethods[method]!
  if (endpoint.registry.resolveResource(uri) === undefined) {
    const upstream = await resolveUri(proxy, record, uri, params, ctx.caller)
    const capabilities = upstream === undefined ? undefined : proxy.link(record, proxy.upstreams.get(upstream)!).server?.capabilities
    if (upstream !== undefined && method === 'resources/subscribe') checkSubscriptionUri(uri, endpoint.route.limits)
    if (upstream !== undefined && capabilities?.resources?.subscribe === true) {
      await proxy.passThrough(record, { upstream, name: uri }, method, { uri }, ctx)
    }
    // A URI an upstream serves is kept here without the local registry's check (it knows nothing of it).
    if (upstream !== undefined && method === 'resources/subscribe') return keepSubscription(endpoint, record, uri, params)
  }
  return local(endpoint, record, params, ctx)
}

/** Just the request's `_meta` (a stateless request's envelope), for the lists a lookup makes. */
function envelopeOf(params: JsonObject): JsonObject {
  return params._meta === undefined ? {} : { _meta: params._meta }
}

function stringParam(value: unknown, message: string): string {
  if (typeof value !== 'string') throw new McpError(RpcCode.InvalidParams, message)
  return value
}
