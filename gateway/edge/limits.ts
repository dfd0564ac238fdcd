/**
 * Rate limits and quotas of one route (config `limits`): what a request is counted under, and the
 * answer a client sees when it is over. Rates and sessions per principal are counted by the limiter
 * (store/limiter.ts), so they hold across workers and hosts: one limiter call per request with rate
 * rules, made before dispatch. Requests in flight per session are counted here, by the process that
 * holds them:
 *
 *   session slot (this process) ─► caller ─► quota key (principal, else address) ─► buckets: transport rules │ tool rules
 *     ─► slot refused:      HTTP 429, "too many requests in flight on this session"
 *     ─► transport refused: HTTP 429 + Retry-After + JSON-RPC error with the request's id
 *     ─► tool refused:      a tools/call result { isError, structuredContent: { retryAfterMs, limit, scope } }
 *
 * Why in-flight requests are counted per process: the bound protects what a process holds (memory,
 * event-loop time, upstream connections) for one session, and each process protects its own. A
 * shared count would cost two store round trips per request (take, release) on every route by
 * default: on Redis it cut tools/call to 0.27× of the same route without it. With N processes
 * behind a round-robin balancer a session may have N × the bound in flight in all, never more than
 * the bound on any one process.
 *
 * A route whose limits are all off gets no RouteLimits at all: its requests do no work for this.
 */
import type { QuotasConfig, RateRule } from '../config/types.ts'
import { EdgeError } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import type { LimitRequest, Limiter, RateBucket } from '../store/limiter.ts'
import { addressKey, quotaKey, type Caller } from './caller.ts'

/** Tool names whose matching rules are remembered; beyond it (names a client invents) they are matched each time. */
const TOOL_CACHE_LIMIT = 1024

/** Why a request is refused; `rule` is the rate rule over its limit (absent for a full session slot). */
export class LimitAnswer {
  readonly kind: 'transport' | 'tool' | 'busy'
  readonly retryAfterMs: number
  readonly rule: RateRule | undefined
  readonly max: number

  constructor(kind: LimitAnswer['kind'], retryAfterMs: number, rule: RateRule | undefined, max: number) {
    this.kind = kind
    this.retryAfterMs = retryAfterMs
    this.rule = rule
    this.max = max
  }

  /** Whose allowance ran out, in the words a client reads: `tools/call of "deploy*" per principal per 60 s`. */
  get scope(): string {
    const rule = this.rule
    if (rule === undefined) return 'requests in flight per session'
    const what = rule.tool === undefined ? 'requests' : `tools/call of "${rule.tool}"`
    return `${what} per ${rule.key === 'ip' ? 'client address' : 'principal'} per ${rule.window} s`
  }

  /** `{retryAfterMs, limit, scope}`: the tool result's structuredContent and the JSON-RPC error's data. */
  data(): JsonObject {
    return { retryAfterMs: this.retryAfterMs, limit: this.rule?.limit ?? this.max, scope: this.scope }
  }
}

/** What a request may do: `true` allowed holding a session slot (release it when done), `false` allowed, else refused. */
export type LimitOutcome = boolean | LimitAnswer

/** Entries of the in-flight Map (sessions, idle ones included) before its first sweep. */
export const SWEEP_FLOOR = 1024

export class RouteLimits {
  readonly #limiter: Limiter
  readonly #location: string
  readonly #transport: ReadonlyArray<{ rule: RateRule; index: number }>
  readonly #tools: ReadonlyArray<{ rule: RateRule; index: number; match: RegExp }>
  readonly #toolMatches = new Map<string, ReadonlyArray<{ rule: RateRule; index: number }>>()
  readonly #concurrent: number
  /**
   * Requests in flight per session on this process. A session's count stays at 0 when its last
   * request ends: deleting the entry made V8 shrink the Map's table on nearly every request (~450
   * instructions of a tools/call, callgrind). Entries at 0 are swept once the Map holds
   * `#sweepAt` of them, so it holds at most twice the sessions with requests in flight (or SWEEP_FLOOR).
   */
  readonly #inFlight = new Map<string, number>()
  #sweepAt = SWEEP_FLOOR
  /** Sessions per principal (per address on an open route); 0 when off. */
  readonly sessionsPerPrincipal: number

  /** The limits of a route, or undefined when they are all off (the route then does no work for limits). */
  static of(location: string, config: QuotasConfig, limiter: Limiter | undefined): RouteLimits | undefined {
    if (config.rate.length === 0 && config.sessions_per_principal === 0 && config.concurrent_requests_per_session === 0) return undefined
    if (limiter === undefined) throw new Error(`route ${location} has limits but the gateway has no limiter`)
    return new RouteLimits(location, config, limiter)
  }

  private constructor(location: string, config: QuotasConfig, limiter: Limiter) {
    this.#limiter = limiter
    this.#location = location
    const rules = config.rate.map((rule, index) => ({ rule, index }))
    this.#transport = rules.filter(({ rule }) => rule.tool === undefined)
    this.#tools = rules.filter(({ rule }) => rule.tool !== undefined).map((entry) => ({ ...entry, match: globToRegExp(entry.rule.tool!) }))
    this.#concurrent = config.concurrent_requests_per_session
    this.sessionsPerPrincipal = config.sessions_per_principal
  }

  /** True when requests need the caller (rate rules exist); a route with only session quotas never builds one. */
  get needsCaller(): boolean {
    return this.#transport.length > 0 || this.#tools.length > 0
  }

  /**
   * Counts one request: `caller` (when `needsCaller`), the session it names (for its slot; undefined
   * for initialize, a stateless request, or a GET stream, which hold none) and the tool a tools/call names.
   */
  check(caller: Caller | undefined, sessionId: string | undefined, tool: string | undefined): LimitOutcome | Promise<LimitOutcome> {
    // The slot first: a request refused for it is charged to no rate (it never started).
    const slot = sessionId !== undefined && this.#concurrent > 0 ? sessionId : undefined
    if (slot !== undefined) {
      const held = this.#inFlight.get(slot) ?? 0
      if (held >= this.#concurrent) return new LimitAnswer('busy', 0, undefined, this.#concurrent)
      if (held === 0 && this.#inFlight.size >= this.#sweepAt) this.#sweep()
      this.#inFlight.set(slot, held + 1)
    }
    const tools = tool === undefined || this.#tools.length === 0 ? undefined : this.#matching(tool)
    if (caller === undefined || (this.#transport.length === 0 && tools === undefined)) return slot !== undefined
    const buckets: RateBucket[] = []
    for (const { rule, index } of this.#transport) buckets.push(this.#bucket(rule, index, caller))
    if (tools !== undefined) for (const { rule, index } of tools) buckets.push(this.#bucket(rule, index, caller))
    const request: LimitRequest = { buckets, toolStart: this.#transport.length }
    let verdict
    try {
      verdict = this.#limiter.take(request)
    } catch (error) {
      if (slot !== undefined) this.done(slot)
      throw error
    }
    if (verdict instanceof Promise) {
      return verdict.then(
        (settled) => this.#outcome(request, settled, tools, slot),
        (error: unknown) => {
          if (slot !== undefined) this.done(slot)
          throw error
        },
      )
    }
    return this.#outcome(request, verdict, tools, slot)
  }

  /** Gives back the slot of a request whose outcome was `true`. */
  done(sessionId: string): void {
    const held = this.#inFlight.get(sessionId)
    if (held !== undefined && held > 0) this.#inFlight.set(sessionId, held - 1)
  }

  /** Entries the in-flight count keeps (sessions with requests in flight, and idle ones not yet swept): what the bound's test reads. */
  get slotEntries(): number {
    return this.#inFlight.size
  }

  /** Entries of sessions with nothing in flight go; the next sweep comes when the Map has doubled. */
  #sweep(): void {
    for (const [sessionId, held] of this.#inFlight) if (held === 0) this.#inFlight.delete(sessionId)
    this.#sweepAt = Math.max(SWEEP_FLOOR, 2 * this.#inFlight.size)
  }

  /** Counts a new session under its creator; false when the creator already has `sessionsPerPrincipal`. */
  admitSession(caller: Caller, sessionId: string): boolean | Promise<boolean> {
    if (this.sessionsPerPrincipal === 0) return true
    return this.#limiter.admit(`${this.#location}|${quotaKey(caller)}`, sessionId, this.sessionsPerPrincipal)
  }

  /**
   * At a full route, the sessions that may end so that `caller` gets one (its fair share of
   * `maxSessions`, docs/limits-and-errors.md): the heaviest client's, least recently used first; none when
   * the caller holds its share already. Counted only where sessions_per_principal counts sessions.
   */
  reclaimable(caller: Caller, maxSessions: number, idleTtlMs: number): string[] | Promise<string[]> {
    if (this.sessionsPerPrincipal === 0) return []
    return this.#limiter.reclaim(`${this.#location}|`, `${this.#location}|${quotaKey(caller)}`, maxSessions, idleTtlMs)
  }

  #outcome(request: LimitRequest, verdict: Awaited<ReturnType<Limiter['take']>>, tools: ReadonlyArray<{ rule: RateRule }> | undefined, slot: string | undefined): LimitOutcome {
    if (verdict === undefined) return slot !== undefined
    // Refused by a rate: the request does not run, so its slot goes back now.
    if (slot !== undefined) this.done(slot)
    const transport = verdict.bucket < request.toolStart
    const rule = transport ? this.#transport[verdict.bucket]!.rule : tools![verdict.bucket - request.toolStart]!.rule
    return new LimitAnswer(transport ? 'transport' : 'tool', verdict.retryAfterMs, rule, rule.limit)
  }

  #bucket(rule: RateRule, index: number, caller: Caller): RateBucket {
    const who = rule.key === 'ip' ? `a:${addressKey(caller.address)}` : quotaKey(caller)
    const windowMs = rule.window * 1000
    return { key: `${this.#location}|${index}|${who}`, intervalMs: windowMs / rule.limit, windowMs }
  }

  #matching(tool: string): ReadonlyArray<{ rule: RateRule; index: number }> | undefined {
    let found = this.#toolMatches.get(tool)
    if (found === undefined) {
      found = this.#tools.filter((entry) => entry.match.test(tool))
      if (this.#toolMatches.size < TOOL_CACHE_LIMIT) this.#toolMatches.set(tool, found)
    }
    return found.length === 0 ? undefined : found
  }
}

/** The refusal of a request over a transport-level rule (429 + Retry-After) or its session's slots (429). */
export function limitRefusal(answer: LimitAnswer): EdgeError {
  if (answer.kind === 'busy') {
    return new EdgeError('MCP_EDGE_TOO_MANY_CONCURRENT_REQUESTS',
      `Too Many Requests: this session already has ${answer.max} requests in flight (concurrent_requests_per_session); wait for one to finish`, { data: answer.data() })
  }
  const seconds = Math.max(1, Math.ceil(answer.retryAfterMs / 1000))
  return new EdgeError('MCP_EDGE_RATE_LIMITED', `Too Many Requests: over ${answer.rule!.limit} ${answer.scope}; retry in ${seconds} s`, {
    data: answer.data(),
    headers: { 'retry-after': String(seconds) },
  })
}

/** The tools/call result of a call over a per-tool limit: an error the model reads and can act on. */
export function toolLimitResult(answer: LimitAnswer): JsonObject {
  const seconds = Math.max(1, Math.ceil(answer.retryAfterMs / 1000))
  const text = `Rate limit reached: at most ${answer.rule!.limit} ${answer.scope}. Do not retry at once: try again in ${seconds} s (${answer.retryAfterMs} ms).`
  return { content: [{ type: 'text', text }], structuredContent: answer.data(), isError: true }
}

/** The wait a client refused a session is told (Retry-After; `data.retryAfterMs` on a WebSocket), as in the error table's rows. */
const SESSION_RETRY_MS = 10_000

/** The refusal of a new session over `sessions_per_principal`. */
export function sessionQuotaRefusal(max: number): EdgeError {
  return new EdgeError('MCP_EDGE_TOO_MANY_PRINCIPAL_SESSIONS',
    `Too Many Requests: this client already has ${max} sessions on this route (sessions_per_principal); end one (DELETE) or let it expire first`, { data: { retryAfterMs: SESSION_RETRY_MS } })
}

/** `*` any run of characters, `?` one character; everything else literal. */
function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
  return new RegExp(`^${body}$`)
}
