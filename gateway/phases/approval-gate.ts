/**
 * The approval gate of a route (`approval:`), laid over its `tools/call` between access and the
 * content phase: a call of a tool that needs approval runs (or goes to its upstream) only once the
 * caller's user approved it. A route without `approval:` has no gate, and its calls pay nothing.
 *
 *   tools/call ─► named in tools, or destructiveHint (destructive: true)? ─ no ─► content phase
 *                     │ yes (and the caller has the tool's scopes)
 *                     ▼
 *   client cannot ask its user (no form elicitation) ─► fallback: refuse │ allow and log
 *   session     ─► elicitation/create on the call's own stream, wait ≤ ttl_s ─► approved ─► content phase
 *   2026-07-28  ─► no approval in requestState ─► input_required {mcp-edge/approval} + signed {id, exp, nonce}
 *                  retry ─► signed ask, not expired, answer approved, nonce unused (store) ─► content phase
 *   declined · cancelled · expired · foreign or used ─► a refusal from the error table; the call never runs
 *
 * The 2026-07-28 approval travels in the requestState this gateway signs (protocol/stateless/
 * request-state.ts), so it is bound to the principal, the method and the digest of the tool's name
 * and arguments, and any worker of any host sharing the key verifies it. Each signed approval lets
 * one round through: its nonce is written once to the store's entry table, and a later round (the
 * tool asking something itself) carries a fresh one.
 */
import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import type { ApprovalConfig } from '../config/types.ts'
import { callRecordOf } from '../events/call-record.ts'
import type { MethodHandler, MethodHost } from '../protocol/methods/method-handler.ts'
import { checkScopes } from '../protocol/methods/params.ts'
import { InputRequired, StatelessRequestContext } from '../protocol/stateless/context.ts'
import type { RequestContext } from '../registry/context.ts'
import type { SessionRecord } from '../store/store.ts'
import type { TaskTable } from '../store/task-table.ts'
import { ClientAnswerError, EdgeCode, EdgeError, McpError, type EdgeCodeName } from '../wire/errors.ts'
import type { ClientCapabilities, JsonObject } from '../wire/mcp-types.ts'
import { APPROVAL_INPUT_KEY, askMessage, askParams, askSchema, isElicitAnswer, verdictOf, type AskFacts, type Verdict } from './approval-ask.ts'

/** What a route knows of a tool a call names: unknown (the content phase refuses it), destructive by its annotations, or neither. */
export type ToolHint = 'unknown' | 'destructive' | 'other'

/** Finds the hint of the tool `name` (a proxy route may list its upstreams once to learn it). */
export type ToolLookup = (host: MethodHost, record: SessionRecord, name: string, params: JsonObject, ctx: RequestContext) => ToolHint | Promise<ToolHint>

/** The hint of a tool of the route's own registry (the catalogue the session sees). */
export function registryHint(host: MethodHost, record: SessionRecord, name: string): ToolHint {
  const entry = host.viewOf(record).tool(name)
  if (entry === undefined || (record.hidden.length > 0 && record.hidden.includes(`tool:${name}`))) return 'unknown'
  return entry.tool.annotations?.destructiveHint === true ? 'destructive' : 'other'
}

/** A handler route's tools. */
export const registryLookup: ToolLookup = (host, record, name) => registryHint(host, record, name)

/** The approval asked (or granted) in a 2026-07-28 requestState: its id, expiry (ms since the epoch) and one-use nonce. */
interface SignedApproval extends JsonObject {
  id: string
  exp: number
  n: string
  granted: boolean
}

const FORM_CAPABILITY = { elicitation: { form: {} } }
const USED_PREFIX = 'approval-used:'

export class ApprovalGate {
  readonly #location: string
  readonly #config: ApprovalConfig
  readonly #names: ReadonlySet<string>
  readonly #globs: RegExp | undefined
  readonly #lookup: ToolLookup
  readonly #used: TaskTable
  readonly #logger: Logger

  constructor(location: string, config: ApprovalConfig, lookup: ToolLookup, used: TaskTable, logger: Logger) {
    this.#location = location
    this.#config = config
    this.#lookup = lookup
    this.#used = used
    this.#logger = logger
    this.#names = new Set(config.tools.filter((pattern) => !/[*?]/.test(pattern)))
    const globs = config.tools.filter((pattern) => /[*?]/.test(pattern)).map(globSource)
    this.#globs = globs.length === 0 ? undefined : new RegExp(`^(?:${globs.join('|')})$`)
  }

  /** `inner` (the route's tools/call) behind the gate. */
  wrap(inner: MethodHandler): MethodHandler {
    return (host, record, params, ctx) => this.#call(inner, host, record, params, ctx)
  }

  /** True when `name` is one of the tools the config names. */
  named(name: string): boolean {
    return this.#names.has(name) || (this.#globs?.test(name) ?? false)
  }

  #call(inner: MethodHandler, host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext): JsonObject | Promise<JsonObject> {
    const name = params.name
    // A malformed call is the content phase's to refuse.
    if (typeof name !== 'string') return inner(host, record, params, ctx)
    const named = this.named(name)
    if (!named && !this.#config.destructive) return inner(host, record, params, ctx)
    const hint = this.#lookup(host, record, name, params, ctx)
    const decide = (found: ToolHint): JsonObject | Promise<JsonObject> => {
      // An unknown tool is refused as such by the content phase, without asking anyone about it.
      if (found === 'unknown' || (!named && found !== 'destructive')) return inner(host, record, params, ctx)
      // Access first: a caller without the tool's scopes is refused, not asked.
      checkScopes(host, ctx.caller, 'tool', name)
      return this.#gate(inner, host, record, params, ctx, name)
    }
    return hint instanceof Promise ? hint.then(decide) : decide(hint)
  }

  #gate(inner: MethodHandler, host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext, name: string): JsonObject | Promise<JsonObject> {
    if (!canAskForm(record.clientCapabilities)) {
      if (this.#config.fallback === 'allow') {
        const id = `fallback-${newId()}`
        this.#note(ctx, id)
        this.#logger.warn({ approval: id, tool: name, principal: ctx.caller.principal }, 'approval: the client cannot ask its user; allowed unasked (approval.fallback: allow)')
        return inner(host, record, params, ctx)
      }
      const id = newId()
      this.#note(ctx, id)
      this.#logger.info({ approval: id, tool: name, principal: ctx.caller.principal }, 'approval: refused, the client cannot ask its user')
      throw refusal('MCP_EDGE_APPROVAL_UNAVAILABLE', id, name, { requiredCapabilities: FORM_CAPABILITY })
    }
    if (ctx instanceof StatelessRequestContext) return this.#round(inner, host, record, params, ctx, name)
    return this.#askInSession(inner, host, record, params, ctx, name)
  }

  /** A session: one elicitation on the call's stream (its answer may reach any worker: the bus brings it here). */
  async #askInSession(inner: MethodHandler, host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext, name: string): Promise<JsonObject> {
    const id = newId()
    this.#note(ctx, id)
    const facts = this.#facts(id, name, record, ctx, params)
    let verdict: Verdict
    try {
      verdict = verdictOf(await ctx.elicit(askMessage(facts), askSchema(name), { timeoutMs: this.#config.ttl_s * 1000 }))
    } catch (error) {
      if (error instanceof EdgeError && error.code === 'MCP_EDGE_CLIENT_TIMEOUT') throw this.#refuse('MCP_EDGE_APPROVAL_EXPIRED', id, name, ctx, 'no answer within approval.ttl_s')
      if (error instanceof EdgeError && error.code === 'MCP_EDGE_REQUEST_CANCELLED') throw error
      // The client could not show the ask (it answered with an error, or with something malformed).
      const why = error instanceof ClientAnswerError || error instanceof EdgeError ? error.message : 'the ask failed'
      throw this.#refuse('MCP_EDGE_APPROVAL_CANCELLED', id, name, ctx, why)
    }
    return this.#decided(verdict, inner, host, record, params, ctx, name, id)
  }

  /** 2026-07-28: ask with an input_required round, or pass the retry that carries this gateway's ask and an approving answer. */
  async #round(inner: MethodHandler, host: MethodHost, record: SessionRecord, params: JsonObject, ctx: StatelessRequestContext, name: string): Promise<JsonObject> {
    const signed = signedApproval(ctx.approval)
    if (signed === undefined) return this.#askForInput(ctx, record, params, name, undefined)
    this.#note(ctx, signed.id)
    if (signed.exp < Date.now()) throw this.#refuse('MCP_EDGE_APPROVAL_EXPIRED', signed.id, name, ctx, 'the retry came after approval.ttl_s')
    if (!signed.granted) {
      const answer = ctx.answers[APPROVAL_INPUT_KEY]
      // Retried without the answer: the same ask again, under the same approval and expiry.
      if (!isElicitAnswer(answer)) return this.#askForInput(ctx, record, params, name, signed)
      // The round's answer, for the audit record (its question was named when asked).
      callRecordOf(ctx)?.round('elicitation/create', 0, undefined, answer.action as string)
      const verdict = verdictOf(answer)
      if (verdict !== 'approved') return this.#decided(verdict, inner, host, record, params, ctx, name, signed.id)
    }
    // One signed approval lets one round through, on whichever host it lands.
    const left = signed.exp - Date.now()
    if ((await this.#used.write(`${USED_PREFIX}${signed.n}`, '1', 0, left + 1000)) === 0) {
      throw this.#refuse('MCP_EDGE_APPROVAL_INVALID', signed.id, name, ctx, 'this requestState let a call through already')
    }
    // Should the tool itself ask something, the next round carries the grant with a fresh nonce.
    ctx.approval = { id: signed.id, exp: signed.exp, n: newId(), granted: true } satisfies SignedApproval
    return this.#decided('approved', inner, host, record, params, ctx, name, signed.id)
  }

  #askForInput(ctx: StatelessRequestContext, record: SessionRecord, params: JsonObject, name: string, asked: SignedApproval | undefined): never {
    const approval = asked ?? { id: newId(), exp: Date.now() + this.#config.ttl_s * 1000, n: newId(), granted: false }
    this.#note(ctx, approval.id)
    ctx.approval = approval
    ctx.inputRequests.set(APPROVAL_INPUT_KEY, { method: 'elicitation/create', params: askParams(this.#facts(approval.id, name, record, ctx, params)) })
    callRecordOf(ctx)?.round('elicitation/create', 0, undefined, 'input_required')
    // The dispatcher answers with the recorded input request, whatever is thrown.
    throw new InputRequired(APPROVAL_INPUT_KEY)
  }

  #decided(verdict: Verdict, inner: MethodHandler, host: MethodHost, record: SessionRecord, params: JsonObject, ctx: RequestContext, name: string, id: string): JsonObject | Promise<JsonObject> {
    if (verdict === 'declined') throw this.#refuse('MCP_EDGE_APPROVAL_DECLINED', id, name, ctx, 'declined')
    if (verdict === 'cancelled') throw this.#refuse('MCP_EDGE_APPROVAL_CANCELLED', id, name, ctx, 'cancelled')
    this.#logger.info({ approval: id, tool: name, principal: ctx.caller.principal }, 'approval: approved by the user')
    return inner(host, record, params, ctx)
  }

  #refuse(code: EdgeCodeName, id: string, tool: string, ctx: RequestContext, why: string): McpError {
    this.#logger.info({ approval: id, tool, principal: ctx.caller.principal, code, why }, 'approval: the call was refused')
    return refusal(code, id, tool)
  }

  /** The call's record for the audit (events/call-record.ts) names the gate and the approval. */
  #note(ctx: RequestContext, id: string): void {
    const record = callRecordOf(ctx)
    if (record === undefined) return
    record.decision = 'approval'
    record.approval = id
  }

  #facts(id: string, tool: string, record: SessionRecord, ctx: RequestContext, params: JsonObject): AskFacts {
    return { id, tool, route: this.#location, principal: ctx.caller.principal, client: record.clientInfo?.name, arguments: params.arguments, maxShownChars: this.#config.max_shown_chars }
  }
}

/** True when the client declared form elicitation (`elicitation: {}` is form only, the 2025-06-18 shape). */
function canAskForm(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation
  return elicitation !== undefined && (elicitation.url === undefined || elicitation.form !== undefined)
}

/** The approval a verified requestState carries, if well formed (it was signed by this gateway, so only an older shape could differ). */
function signedApproval(state: JsonObject | undefined): SignedApproval | undefined {
  if (state === undefined || typeof state.id !== 'string' || typeof state.exp !== 'number' || typeof state.n !== 'string') return undefined
  return { id: state.id, exp: state.exp, n: state.n, granted: state.granted === true }
}

/** The refusal a client sees: the row's code and message, and which approval and tool it was about. */
function refusal(code: EdgeCodeName, id: string, tool: string, extra: JsonObject = {}): McpError {
  const row = EdgeCode[code]
  return new McpError(row.rpc, row.message, { code, approval: id, tool, ...extra })
}

/** An approval id or nonce: random, unguessable, and no secret (a signed state is what carries authority). */
function newId(): string {
  return randomBytes(12).toString('base64url')
}

/** A glob (`*` any run of characters, `?` one) as a regular expression's source. */
function globSource(glob: string): string {
  return glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
}
