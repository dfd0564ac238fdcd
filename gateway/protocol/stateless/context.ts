/**
 * `ctx` for a stateless (2026-07-28) request. Progress and logs go on the response stream as in a
 * session; server→client requests cannot, so `elicit`, `createMessage` and `listRoots` answer from the
 * client's `inputResponses` (and the answers of earlier rounds kept in the signed request state) and,
 * when an answer is missing, record an input request and throw. The dispatcher turns the recorded
 * requests into an input-required result, whatever the handler did with the throw. An answer that is
 * there is checked as a session's is (client-answers.ts): a malformed one is an InvalidClientAnswerError.
 */
import { auditedRound } from '../../events/call-record.ts'
import type { Caller } from '../../wire/caller.ts'
import { EdgeError, McpError, RpcCode } from '../../wire/errors.ts'
import type { ClientRequestOptions, RequestContext, SessionView, UrlElicitation } from '../../registry/context.ts'
import type { RequestId } from '../../wire/jsonrpc.ts'
import type {
  CreateMessageOptions,
  CreateMessageResult,
  ElicitationSchema,
  ElicitResult,
  JsonObject,
  LogLevel,
  Root,
  SamplingMessage,
} from '../../wire/mcp-types.ts'
import { checkCreateMessageResult, checkElicitResult, checkRoots, elicitationValidator } from '../client-answers.ts'
import { ContextBase } from '../context-base.ts'
import type { RequestSink } from '../sink.ts'
import type { Envelope } from './envelope.ts'

/** Thrown inside a handler when it needs an answer the client has not given yet. */
export class InputRequired extends Error {
  constructor(key: string) {
    super(`input required: ${key} (the gateway asks the client and runs the handler again)`)
    this.name = 'InputRequired'
  }
}

export interface StatelessHost {
  logToGateway(level: LogLevel, data: unknown, logger: string | undefined, sessionId: string | undefined): void
  readonly logging: boolean
  statelessSession(envelope: Envelope): SessionView
}

export interface InputRequest { method: string; params: JsonObject }


export class StatelessRequestContext extends ContextBase implements RequestContext {
  /** Input requests recorded this round, by key. */
  readonly inputRequests = new Map<string, InputRequest>()
  /** The client's answers: this round's inputResponses over those kept from earlier rounds. */
  readonly answers: JsonObject
  /**
   * The approval gate's state (gateway/phases/approval-gate.ts): as the verified requestState carried
   * it in, and as the gate leaves it for the next round's requestState. Undefined on routes without one.
   */
  approval: JsonObject | undefined
  #nextState: unknown
  #calls = 0
  readonly #host: StatelessHost
  readonly #envelope: Envelope
  readonly #previousState: unknown

  constructor(host: StatelessHost, envelope: Envelope, requestId: RequestId, meta: JsonObject | undefined, sink: RequestSink, answers: JsonObject, previousState: unknown, caller: Caller) {
    super(requestId, meta, sink, caller)
    this.#host = host
    this.#envelope = envelope
    this.answers = answers
    this.#previousState = previousState
    this.#nextState = previousState
  }

  get session(): SessionView {
    return this.#host.statelessSession(this.#envelope)
  }

  get requestState(): unknown {
    return this.#previousState
  }

  /** The state to sign into the next round's requestState. */
  get nextRequestState(): unknown {
    return this.#nextState
  }

  setRequestState(state: unknown): void {
    this.#nextState = state
  }

  log(level: LogLevel, data: unknown, logger?: string): void {
    this.#host.logToGateway(level, data, logger, undefined)
    // 2026-07-28: no log level in the envelope means no log notifications at all.
    const minimum = this.#envelope.logLevel
    this.notifyLog(level, data, logger, minimum === undefined || !this.#host.logging ? null : minimum)
  }

  async elicit(message: string, schema: ElicitationSchema | UrlElicitation, options?: ClientRequestOptions): Promise<ElicitResult> {
    const elicitation = this.#envelope.clientCapabilities.elicitation
    if ('mode' in schema && schema.mode === 'url') {
      if (elicitation?.url === undefined) throw missingCapability({ elicitation: { url: {} } })
      const answer = await auditedRound(this, 'elicitation/create', this.#answer(options?.key, 'elicitation', {
        method: 'elicitation/create',
        params: { mode: 'url', message, url: schema.url },
      }))
      return checkElicitResult(answer, undefined)
    }
    if (elicitation === undefined || (elicitation.url !== undefined && elicitation.form === undefined)) {
      throw missingCapability({ elicitation: {} })
    }
    // Compiled before the client is asked: a schema that does not compile is the handler's mistake.
    const validate = elicitationValidator(schema as ElicitationSchema)
    const answer = await auditedRound(this, 'elicitation/create', this.#answer(options?.key, 'elicitation', {
      method: 'elicitation/create',
      params: { message, requestedSchema: schema },
    }))
    return checkElicitResult(answer, validate)
  }

  elicitationComplete(_elicitationId: string): void {
    // Removed in 2026-07-28: the client learns a URL elicitation's outcome by retrying.
  }

  async createMessage(messages: SamplingMessage[], maxTokens: number, options: CreateMessageOptions & ClientRequestOptions = {}): Promise<CreateMessageResult> {
    const sampling = this.#envelope.clientCapabilities.sampling
    if (sampling === undefined) throw missingCapability({ sampling: {} })
    if ((options.tools !== undefined || options.toolChoice !== undefined) && sampling.tools === undefined) {
      throw missingCapability({ sampling: { tools: {} } })
    }
    const { timeoutMs, onProgress, key, ...rest } = options
    void timeoutMs
    void onProgress
    return checkCreateMessageResult(await auditedRound(this, 'sampling/createMessage', this.#answer(key, 'sampling', {
      method: 'sampling/createMessage',
      params: { ...rest, messages, maxTokens },
    })))
  }

  async listRoots(options?: ClientRequestOptions): Promise<Root[]> {
    if (this.#envelope.clientCapabilities.roots === undefined) throw missingCapability({ roots: {} })
    return checkRoots(await this.#answer(options?.key, 'roots', { method: 'roots/list', params: {} }))
  }

  async ping(): Promise<void> {
    throw new EdgeError('MCP_EDGE_CLIENT_CAPABILITY_MISSING', 'ping is not available in a stateless (2026-07-28) request')
  }

  closeStream(): boolean {
    return false
  }

  /** The client's answer for this call (unchecked), or a recorded input request and a throw. */
  #answer(key: string | undefined, kind: string, request: InputRequest): Promise<unknown> {
    const name = key ?? `${kind}-${this.#calls}`
    this.#calls++
    const answer = this.answers[name]
    if (answer !== undefined) return Promise.resolve(answer)
    this.inputRequests.set(name, request)
    return Promise.reject(new InputRequired(name))
  }
}

function missingCapability(requiredCapabilities: JsonObject): McpError {
  const names = Object.keys(requiredCapabilities).join(', ')
  return new McpError(RpcCode.MissingCapability, `Missing required client capability: ${names}`, { requiredCapabilities })
}
