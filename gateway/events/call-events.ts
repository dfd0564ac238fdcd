/**
 * The one source of what calls did: every request a route dispatches (tools/call, prompts/get,
 * resources/read and every other method) ends as one call here, and everything that reports on calls
 * reads it: the Prometheus metrics (edge/metrics.ts), the admin API's counters and recent-errors ring
 * (admin/), and any subscriber (a log phase, an audit sink).
 *
 *   request ─► CallRecord (the sink the method answers through) ─► answer sent ─► finish():
 *                 tally[route][method, component] += 1, errors by kind, latency bucket   (arithmetic only)
 *                 an error ─► the ring (bounded)          subscribers? ─► CallEvent, delivered on setImmediate
 *
 * On the request path a call costs one CallRecord and counter arithmetic after the answer left; the
 * event object (with its session hash) is made only when someone reads it: an error for the ring, or
 * a subscriber. Label values are bounded: a component is named only when the route knows it (its
 * registry, an upstream's list, or an upstream that served the call) and while the route has fewer than MAX_COMPONENTS_PER_ROUTE names;
 * otherwise it is OTHER_COMPONENT. Methods outside the MCP set are `other`.
 */
import crypto, { createHash } from 'node:crypto'
import { RpcCode } from '../wire/errors.ts'
import type { Caller } from '../wire/caller.ts'
import type { JsonRpcRequest, JsonRpcResponse } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

/** The latency buckets (seconds) every call histogram uses, the dashboard's quantiles too. */
export const CALL_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
/** Distinct component labels one route may have; beyond, calls count under OTHER_COMPONENT. */
export const MAX_COMPONENTS_PER_ROUTE = 256
/** Recent failed calls kept for the admin API (`/api/errors`), per process. */
export const ERROR_RING_SIZE = 200
/** The component label of a name the route does not know, or of one past the cap. */
export const OTHER_COMPONENT = '_other'
/** The component label of a method that names no component (lists, ping, initialize…). */
export const NO_COMPONENT = ''
export const OTHER_METHOD = 'other'
/**
 * The method of a request refused before its body was read (a credential, Origin/Host, Accept,
 * Content-Type, the body's size): nothing says what it asked, and nothing reads its body to find out.
 */
export const UNREAD_METHOD = ''

const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'initialize', 'ping', 'tools/list', 'tools/call', 'prompts/list', 'prompts/get',
  'resources/list', 'resources/templates/list', 'resources/read', 'resources/subscribe', 'resources/unsubscribe',
  'completion/complete', 'logging/setLevel', 'server/discover', 'subscriptions/listen',
  'tasks/get', 'tasks/list', 'tasks/result', 'tasks/cancel',
])

/** Why a call failed, a fixed set (the label `kind`). */
export type ErrorKind = 'tool_error' | 'invalid_params' | 'method_not_found' | 'not_found' | 'internal' | 'refused' | 'cancelled' | 'unavailable' | 'rpc_error'

/** One finished call, as a subscriber (and the errors ring) sees it. Never carries a token or arguments. */
export interface CallEvent {
  /** Milliseconds since the epoch, when the answer was sent. */
  readonly at: number
  readonly route: string
  readonly method: string
  /** The tool, prompt or resource (template) named, as the route knows it; '' for none, `_other` for unknown. */
  readonly component: string
  /** The upstream that served it, on a proxy route. */
  readonly upstream: string | undefined
  /** The caller's `sub` (the principal), never its credential. */
  readonly principal: string | undefined
  /** A hash of the session id ('' for a stateless call): correlates without revealing the id. */
  readonly session: string
  readonly outcome: 'ok' | 'error'
  readonly error: ErrorKind | undefined
  /** The error's message as the client got it (never internal text: that is logged with a reference). */
  readonly message: string | undefined
  readonly durationMs: number
  readonly generation: number
  /** The caller's token issuer (`iss`), when it came with a verified JWT. */
  readonly issuer: string | undefined
  /** The OAuth client the caller's token was issued to (`client_id`, else `azp`), when known. */
  readonly client: string | undefined
  /** The rule that decided a refusal or an unusual outcome ('access', 'scope', 'rate_limit', 'rewrite', 'filter', 'approval'…). */
  readonly decision: string | undefined
  /** The approval that let the call through, by id. */
  readonly approval: string | undefined
  /** Present (true) when a tools/call was answered from the result cache (registry/result-cache.ts). */
  readonly cached?: true
}

/** Who made a call, as a CallRecord (or a refusal before dispatch) tells it. */
export interface CallWho {
  readonly upstream?: string | undefined
  readonly principal?: string | undefined
  readonly session: string
  readonly decision?: string | undefined
  readonly approval?: string | undefined
  readonly caller?: Caller | undefined
  readonly request?: JsonRpcRequest | undefined
  /** The call was answered from the result cache (a CallRecord's `cached`). */
  readonly cached?: boolean
}

/** The params of the request `event` records (undefined when it had none), for the audit sink's digest. */
export function paramsOf(event: CallEvent): JsonObject | undefined {
  return RecordedEvent.paramsOf(event)
}

function claim(caller: Caller | undefined, name: string): string | undefined {
  const value = caller?.token?.claims[name]
  return typeof value === 'string' ? value : undefined
}

export type CallListener = (events: readonly CallEvent[]) => void

/** Counts of one (route, method, component) or one (route, upstream). */
export interface Tally {
  calls: number
  errors: Map<ErrorKind, number>
  /** Per bucket (not cumulative); the last counts durations above every bound. */
  buckets: Float64Array
  sumSeconds: number
}

/** A route's answers to "is this a component I know?" (its registry, its upstreams' lists). */
export interface ComponentSource {
  knows(method: string, name: string): string | undefined
}

function newTally(): Tally {
  return { calls: 0, errors: new Map(), buckets: new Float64Array(CALL_BUCKETS.length + 1), sumSeconds: 0 }
}

function count(tally: Tally, seconds: number, error: ErrorKind | undefined): void {
  tally.calls++
  if (error !== undefined) tally.errors.set(error, (tally.errors.get(error) ?? 0) + 1)
  let bucket = 0
  while (bucket < CALL_BUCKETS.length && seconds > CALL_BUCKETS[bucket]!) bucket++
  tally.buckets[bucket]!++
  tally.sumSeconds += seconds
}

/** The kind of a JSON-RPC answer: undefined for a success. */
export function errorKindOf(message: JsonRpcResponse): ErrorKind | undefined {
  if ('error' in message) {
    switch (message.error.code) {
      case RpcCode.InvalidParams: return 'invalid_params'
      case RpcCode.MethodNotFound: return 'method_not_found'
      case RpcCode.ResourceNotFound: return 'not_found'
      case RpcCode.InternalError: return 'internal'
      case RpcCode.ServerError: case RpcCode.SessionNotFound: return 'refused'
      default: return 'rpc_error'
    }
  }
  return (message.result as JsonObject | undefined)?.isError === true ? 'tool_error' : undefined
}

/**
 * A CallEvent as emitted. The request's params (the audit sink's argument digest) are in a private
 * field: a log module, handed the event, cannot reach an argument; and unlike a WeakMap entry per
 * event, the field costs the event one slot.
 */
class RecordedEvent implements CallEvent {
  readonly at = Date.now()
  readonly route: string
  readonly method: string
  readonly component: string
  readonly upstream: string | undefined
  readonly principal: string | undefined
  readonly session: string
  readonly outcome: 'ok' | 'error'
  readonly error: ErrorKind | undefined
  readonly message: string | undefined
  readonly durationMs: number
  readonly generation: number
  readonly issuer: string | undefined
  readonly client: string | undefined
  readonly decision: string | undefined
  readonly approval: string | undefined
  /** Always present (undefined unless it was cached): one object shape for every event. */
  readonly cached: true | undefined
  #params: JsonObject | undefined

  constructor(route: string, generation: number, method: string, component: string, seconds: number, error: ErrorKind | undefined, message: string | undefined, who: CallWho, params: JsonObject | undefined) {
    const caller = who.caller
    this.route = route
    this.method = method
    this.component = component
    this.upstream = who.upstream
    this.principal = who.principal ?? caller?.principal
    this.session = who.session === '' ? '' : sessionHash(who.session)
    this.outcome = error === undefined ? 'ok' : 'error'
    this.error = error
    this.message = message
    this.durationMs = Math.round(seconds * 1e6) / 1e3
    this.generation = generation
    this.issuer = claim(caller, 'iss')
    this.client = claim(caller, 'client_id') ?? claim(caller, 'azp')
    this.decision = who.decision
    this.approval = who.approval
    this.cached = who.cached === true ? true : undefined
    this.#params = params
  }

  static paramsOf(event: CallEvent): JsonObject | undefined {
    return #params in event ? event.#params : undefined
  }

  /** Lets the params go once every subscriber has seen the event (the error ring keeps events longer). */
  static release(event: CallEvent): void {
    if (#params in event) event.#params = undefined
  }
}

/** The calls of one route: where its CallRecords finish. */
export class RouteCalls {
  readonly location: string
  /** `method\0component` → tally. */
  readonly tallies = new Map<string, Tally>()
  readonly upstreams = new Map<string, Tally>()
  readonly #events: CallEvents
  #components = new Set<string>()
  /**
   * method → name → tally, for names that are their own label (tools, prompts, static resources): a
   * repeated call costs two map lookups, no string built. Bounded like the labels (a name is cached
   * only once it has its own label); a template's URIs are not cached (they would grow without bound).
   */
  readonly #fast = new Map<string, Map<string, Tally>>()
  source: ComponentSource | undefined

  constructor(events: CallEvents, location: string) {
    this.#events = events
    this.location = location
  }

  /**
   * The label of `name` for `method`: the route's own name for it (or, `served`, the name an upstream
   * answered to), else `_other` (unknown, or over the cap).
   */
  label(method: string, name: string | undefined, served = false): string {
    if (name === undefined) return NO_COMPONENT
    // An upstream that served the name knows it, even before a list taught it to this route.
    const known = this.source?.knows(method, name) ?? (served ? name : undefined)
    if (known === undefined) return OTHER_COMPONENT
    if (!this.#components.has(known)) {
      if (this.#components.size >= MAX_COMPONENTS_PER_ROUTE) return OTHER_COMPONENT
      this.#components.add(known)
    }
    return known
  }

  /** Counts one finished call; makes its event only when an error ring or a subscriber reads it. */
  finish(method: string, name: string | undefined, seconds: number, error: ErrorKind | undefined, message: string | undefined, who: CallWho): void {
    const methodLabel = KNOWN_METHODS.has(method) ? method : OTHER_METHOD
    const fast = this.#fast.get(methodLabel)
    let tally = fast?.get(name ?? NO_COMPONENT)
    let component = name ?? NO_COMPONENT
    if (tally === undefined) {
      const served = who.upstream !== undefined && (error === undefined || error === 'tool_error')
      component = this.label(methodLabel, name, served)
      const key = `${methodLabel}\0${component}`
      tally = this.tallies.get(key)
      if (tally === undefined) this.tallies.set(key, (tally = newTally()))
      if (component === (name ?? NO_COMPONENT) && component !== OTHER_COMPONENT) {
        if (fast === undefined) this.#fast.set(methodLabel, new Map([[component, tally]]))
        else fast.set(component, tally)
      }
    }
    count(tally, seconds, error)
    if (error === undefined && !this.#events.subscribed) return
    this.#emit(methodLabel, component, seconds, error, message, who)
  }

  /**
   * A request refused before it reached the route's dispatch (the access phase, a rate limit or a
   * quota): an event for the subscribers (the audit record), not a counted call. Costs nothing when
   * nobody subscribes.
   */
  refused(method: string, name: string | undefined, error: ErrorKind, message: string, who: CallWho): void {
    if (!this.#events.subscribed) return
    const methodLabel = KNOWN_METHODS.has(method) ? method : OTHER_METHOD
    this.#emit(methodLabel, this.label(methodLabel, name), 0, error, message, who)
  }

  /**
   * A request refused before its body was read (see UNREAD_METHOD): an event for the subscribers with
   * no method and no component. Costs nothing when nobody subscribes.
   */
  refusedUnread(message: string, who: CallWho): void {
    if (!this.#events.subscribed) return
    this.#emit(UNREAD_METHOD, NO_COMPONENT, 0, 'refused', message, who)
  }

  /** A server→client round of a call (elicitation, sampling) for the subscribers; nothing when none. */
  round(method: string, name: string | undefined, seconds: number, error: ErrorKind | undefined, message: string | undefined, who: CallWho): void {
    if (!this.#events.subscribed) return
    this.#emit(method, name ?? NO_COMPONENT, seconds, error, message, who)
  }

  get subscribed(): boolean {
    return this.#events.subscribed
  }

  #emit(method: string, component: string, seconds: number, error: ErrorKind | undefined, message: string | undefined, who: CallWho): void {
    // The params only while something reads them (the audit sink): an event may outlive its request (the
    // admin view's ring of recent errors), and a request's params can be megabytes.
    const params = this.#events.subscribed ? who.request?.params : undefined
    this.#events.emit(new RecordedEvent(this.location, this.#events.generation, method, component, seconds, error, message, who, params))
  }

  /** Counts one request sent to an upstream (a proxied call, a list's fan-out). */
  upstreamCall(upstream: string, seconds: number, error: ErrorKind | undefined): void {
    let tally = this.upstreams.get(upstream)
    if (tally === undefined) this.upstreams.set(upstream, (tally = newTally()))
    count(tally, seconds, error)
  }
}

/** Session ids whose hash was made, kept so a session's next call does not hash again; cleared when full. */
const SESSION_HASHES_KEPT = 4096
const sessionHashes = new Map<string, string>()

/** A session id's stable, short, one-way name (sha-256, 16 hex digits). */
export function sessionHash(id: string): string {
  let hash = sessionHashes.get(id)
  if (hash !== undefined) return hash
  // The one-shot crypto.hash where Node has it (20.12+): no Hash object.
  hash = (typeof crypto.hash === 'function' ? crypto.hash('sha256', id, 'hex') : createHash('sha256').update(id).digest('hex')).slice(0, 16)
  if (sessionHashes.size >= SESSION_HASHES_KEPT) sessionHashes.clear()
  sessionHashes.set(id, hash)
  return hash
}

/** Every route's calls in this process (one gateway generation), the errors ring and the subscribers. */
export class CallEvents {
  readonly generation: number
  readonly routes = new Map<string, RouteCalls>()
  readonly #ring: CallEvent[] = []
  #next = 0
  readonly #listeners = new Set<CallListener>()
  #pending: CallEvent[] = []
  #scheduled = false

  constructor(generation: number) {
    this.generation = generation
  }

  route(location: string): RouteCalls {
    let calls = this.routes.get(location)
    if (calls === undefined) this.routes.set(location, (calls = new RouteCalls(this, location)))
    return calls
  }

  get subscribed(): boolean {
    return this.#listeners.size > 0
  }

  /** Calls `listener` with batches of finished calls, off the request path; returns the unsubscribe. */
  subscribe(listener: CallListener): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  /** The recent failed calls, newest first. */
  recentErrors(): CallEvent[] {
    const ordered = [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)]
    return ordered.reverse()
  }

  emit(event: CallEvent): void {
    if (event.outcome === 'error') {
      if (this.#ring.length < ERROR_RING_SIZE) this.#ring.push(event)
      else this.#ring[this.#next] = event
      this.#next = (this.#next + 1) % ERROR_RING_SIZE
    }
    if (this.#listeners.size === 0) return
    this.#pending.push(event)
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      const batch = this.#pending
      this.#pending = []
      this.#scheduled = false
      for (const listener of this.#listeners) {
        try {
          listener(batch)
        } catch {
          // A subscriber's failure is its own; the calls went out already.
        }
      }
      // Subscribers read params synchronously (the audit sink's digest); the error ring must not keep them.
      for (const event of batch) RecordedEvent.release(event)
    })
  }
}
