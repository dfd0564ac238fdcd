/**
 * `ctx` of a tool callback running as a task. The request that made the task has been answered, so
 * nothing goes on its stream: the callback has its own signal (tasks/cancel from any worker fires
 * it), `ctx.task` for its id and status message, and progress messages become the status message.
 * What it asks the client waits in the task: a 2026-07-28 client sees it as `input_required` with
 * `inputRequests` on tasks/get and answers with tasks/update; a 2025-11-25 session is asked on its
 * standalone stream (the task shows `input_required` meanwhile). Either way the answer is checked as
 * a session's is (protocol/client-answers.ts, handed in as `ClientAnswerChecks`: tasks/ sits below
 * protocol/): a malformed one is an InvalidClientAnswerError in the callback.
 */
import type { ClientRequestOptions, RequestContext, SessionView, TaskInfo, UrlElicitation } from '../registry/context.ts'
import type { Caller } from '../wire/caller.ts'
import { EdgeError } from '../wire/errors.ts'
import type {
  CreateMessageOptions,
  CreateMessageResult,
  ElicitationSchema,
  ElicitResult,
  JsonObject,
  LogLevel,
  Root,
  SamplingMessage,
} from '../wire/mcp-types.ts'
import type { ValidateFunction } from '../registry/json-schema.ts'
import type { TaskInputRequest } from './task-record.ts'

/** The checks a session's answers from the client pass (protocol/client-answers.ts), the same for a task's. */
export interface ClientAnswerChecks {
  /** The validator of an elicitation's requestedSchema, compiled before the client is asked. */
  elicitationValidator(schema: ElicitationSchema): ValidateFunction
  checkElicitResult(answer: unknown, validate: ValidateFunction | undefined): ElicitResult
  checkCreateMessageResult(answer: unknown): CreateMessageResult
  checkRoots(answer: unknown): Root[]
}

/** How a task's context reaches its task: input, status, the gateway's log. */
export interface TaskLink {
  readonly info: TaskInfo
  /** 2025-11-25 (questions go on the session's stream) or 2026-07-28 (they wait in the task). */
  readonly core: boolean
  /** Waits in the task for the client's answer to `request` under `key`. */
  ask(key: string, request: TaskInputRequest): Promise<unknown>
  /** What the answers must look like. */
  readonly checks: ClientAnswerChecks
  /** Runs a question asked on the session's stream, with the task showing input_required meanwhile. */
  viaSession<T>(question: () => Promise<T>): Promise<T>
  log(level: LogLevel, data: unknown, logger: string | undefined): void
}

export class TaskContext implements RequestContext {
  readonly _meta: JsonObject | undefined
  readonly requestId: string | number
  readonly signal: AbortSignal
  readonly session: SessionView
  readonly caller: Caller
  readonly requestState: unknown = undefined
  readonly task: TaskInfo
  readonly #link: TaskLink
  #asked = 0

  constructor(origin: RequestContext, signal: AbortSignal, link: TaskLink) {
    this._meta = origin._meta
    this.requestId = origin.requestId
    this.session = origin.session
    this.caller = origin.caller
    this.signal = signal
    this.task = link.info
    this.#link = link
  }

  progress(_progress: number, _total?: number, message?: string): boolean {
    if (this.signal.aborted) return false
    if (message !== undefined) void this.task.status(message)
    return true
  }

  log(level: LogLevel, data: unknown, logger?: string): void {
    this.#link.log(level, data, logger)
  }

  async elicit(message: string, schema: ElicitationSchema | UrlElicitation, options?: ClientRequestOptions): Promise<ElicitResult> {
    if (this.#link.core) return this.#link.viaSession(() => this.session.elicit(message, schema, options))
    const declared = this.session.clientCapabilities.elicitation
    if ('mode' in schema && schema.mode === 'url') {
      if (declared?.url === undefined) return missing('elicitation (url mode)')
      const answer = await this.#ask(options?.key, 'elicitation', { method: 'elicitation/create', params: { mode: 'url', message, url: schema.url } })
      return this.#link.checks.checkElicitResult(answer, undefined)
    }
    if (declared === undefined) return missing('elicitation')
    // Compiled before the client is asked: a schema that does not compile is the handler's mistake.
    const validate = this.#link.checks.elicitationValidator(schema as ElicitationSchema)
    const answer = await this.#ask(options?.key, 'elicitation', { method: 'elicitation/create', params: { message, requestedSchema: schema as unknown as JsonObject } })
    return this.#link.checks.checkElicitResult(answer, validate)
  }

  elicitationComplete(_elicitationId: string): void {
    // A task's URL elicitation ends when the client answers it with tasks/update.
  }

  async createMessage(messages: SamplingMessage[], maxTokens: number, options: CreateMessageOptions & ClientRequestOptions = {}): Promise<CreateMessageResult> {
    if (this.#link.core) return this.#link.viaSession(() => this.session.createMessage(messages, maxTokens, options))
    if (this.session.clientCapabilities.sampling === undefined) return missing('sampling')
    const { timeoutMs: _timeout, onProgress: _progress, key, ...rest } = options
    return this.#link.checks.checkCreateMessageResult(await this.#ask(key, 'sampling', { method: 'sampling/createMessage', params: { ...rest, messages, maxTokens } as unknown as JsonObject }))
  }

  async listRoots(options?: ClientRequestOptions): Promise<Root[]> {
    if (this.#link.core) return this.#link.viaSession(() => this.session.listRoots(options))
    if (this.session.clientCapabilities.roots === undefined) return missing('roots')
    return this.#link.checks.checkRoots(await this.#ask(options?.key, 'roots', { method: 'roots/list', params: {} }))
  }

  ping(options?: ClientRequestOptions): Promise<void> {
    if (this.#link.core) return this.session.ping(options)
    return Promise.reject(new EdgeError('MCP_EDGE_CLIENT_CAPABILITY_MISSING', 'ping is not available in a 2026-07-28 task'))
  }

  closeStream(): boolean {
    return false
  }

  setRequestState(_state: unknown): void {
    // A task has no further rounds: what it needs lives in the task.
  }

  #ask(key: string | undefined, kind: string, request: TaskInputRequest): Promise<unknown> {
    const name = key ?? `${kind}-${this.#asked}`
    this.#asked++
    return this.#link.ask(name, request)
  }
}

function missing(capability: string): Promise<never> {
  return Promise.reject(new EdgeError('MCP_EDGE_CLIENT_CAPABILITY_MISSING', `The client did not declare the ${capability} capability`))
}
