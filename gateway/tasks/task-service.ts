/**
 * Tool calls as durable tasks, for one route on every worker. The record lives in the store (any
 * worker answers for it); the callback runs on the worker that made the task, which says it still
 * lives by a heartbeat in the store.
 *
 *   tools/call ─► task asked? ─no─► required? ─► -32021 │ the call as usual
 *                   │ yes
 *                   ▼
 *              prepare (in the request) ─► record (store) ─► CreateTaskResult
 *                   └──► callback here (ctx.task, its own signal) ─► completed │ failed ─► store
 *
 *   tasks/cancel (any worker) ─► store: cancelled ─► bus {cancel} ─► the running worker aborts
 *   tasks/update (any worker) ─► store: answers ─► bus {input} ─► the callback's question resolves
 *   tasks/get (any worker) ─► store ─► unfinished and no heartbeat for producer_timeout? ─► failed
 *
 * Where a change goes once stored (the bus, the owner session, pollers) is task-changes.ts.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { RouteConfig } from '../config/types.ts'
import { callTool } from '../registry/call-tool.ts'
import type { RequestContext, TaskInfo } from '../registry/context.ts'
import type { ToolEntry } from '../registry/entries.ts'
import { internalErrorText, reportFailure } from '../registry/failure-report.ts'
import { describeErrors } from '../registry/json-schema.ts'
import type { SessionRecord, SessionStore } from '../store/store.ts'
import type { Caller } from '../wire/caller.ts'
import { EdgeCode, EdgeError, McpError, RpcCode } from '../wire/errors.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import type { JsonObject, LogLevel } from '../wire/mcp-types.ts'
import { TaskChanges } from './task-changes.ts'
import { TaskContext, type ClientAnswerChecks, type TaskLink } from './task-context.ts'
import { TaskHeartbeat, WORKER } from './task-heartbeat.ts'
import { declaresTasks, isCoreEra, ownerOf, taskRefusal, tasksRequired } from './task-rules.ts'
import { createTaskResult, isTerminal, type TaskError, type TaskInputRequest, type TaskRecord } from './task-record.ts'
import { TaskRepo } from './task-repo.ts'

/** What the service needs of its route's endpoint. */
export interface TaskHost {
  readonly route: RouteConfig
  readonly store: SessionStore
  readonly logger: Logger
  /** Sends on a session's standalone stream, wherever it is open (2025-11-25 status notifications). */
  notifySession(sessionId: string, message: JsonRpcMessage): void
  /** The checks of the client's answers (protocol/client-answers.ts): a task's input passes them as a session's does. */
  readonly answerChecks: ClientAnswerChecks
}

interface Waiter {
  resolve(value: unknown): void
  reject(error: unknown): void
}

/** A callback running here. */
interface Running {
  readonly controller: AbortController
  /** Questions waiting for the client's answer, by key. */
  readonly waiters: Map<string, Waiter>
}

export class TaskService {
  readonly #host: TaskHost
  readonly #repo: TaskRepo
  readonly #changes: TaskChanges
  readonly #running = new Map<string, Running>()
  readonly #aliveMs: number
  readonly #heartbeat: TaskHeartbeat

  constructor(host: TaskHost) {
    this.#host = host
    const { tasks } = host.route
    this.#repo = new TaskRepo(host.store.tasks, tasks.max_ttl * 1000)
    this.#aliveMs = host.route.producer_timeout * 1000
    this.#heartbeat = new TaskHeartbeat(this.#repo, this.#aliveMs, () => this.#running.size > 0, host.logger)
    this.#changes = new TaskChanges({
      location: host.route.location,
      store: host.store,
      logger: host.logger,
      notifySession: (id, message) => host.notifySession(id, message),
      onCancel: (task) => this.#running.get(task)?.controller.abort('cancelled by the client'),
      onInput: (task) => void this.#takeAnswers(task),
    }, this.#repo)
  }

  /**
   * tools/call of a tool that may run as a task: a task when the client asked for one (a `task`
   * param in 2025-11-25, the extension in the 2026-07-28 envelope), the call as usual otherwise.
   */
  callTool(entry: ToolEntry, params: JsonObject, record: SessionRecord, ctx: RequestContext): JsonObject | Promise<JsonObject> {
    const core = isCoreEra(record)
    const asked = core ? typeof params.task === 'object' && params.task !== null : declaresTasks(record)
    if (!asked) {
      if (entry.tool.taskSupport === 'required') throw tasksRequired(`Tool ${entry.tool.name}`)
      return callTool(entry, params.arguments, ctx, this.#host.logger) as JsonObject | Promise<JsonObject>
    }
    const args = (params.arguments ?? {}) as JsonObject
    if (!entry.validateInput(args)) {
      return { content: [{ type: 'text', text: `Invalid arguments: ${describeErrors(entry.validateInput.errors)}` }], isError: true }
    }
    const prepare = entry.tool.prepare
    const requestedTtl = core ? (params.task as JsonObject).ttl : undefined
    if (prepare === undefined) return this.#start(entry, args, record, ctx, requestedTtl, undefined)
    return Promise.resolve(prepare(args, ctx)).then((prepared) => this.#start(entry, args, record, ctx, requestedTtl, prepared))
  }

  /** The caller's task, its worker's death noticed; a refusal when unknown or someone else's. */
  async get(id: unknown, record: SessionRecord, caller: Caller): Promise<TaskRecord> {
    if (typeof id !== 'string') throw new McpError(RpcCode.InvalidParams, 'params.taskId must be a string')
    const task = await this.#repo.get(id)
    if (task === undefined || task.route !== this.#host.route.location || task.owner !== ownerOf(record, caller)) throw taskRefusal('MCP_EDGE_TASK_NOT_FOUND')
    return this.#checkAlive(task)
  }

  /** Waits until the caller's task finishes (tasks/result), or `signal` fires. */
  async finished(id: unknown, record: SessionRecord, caller: Caller, signal: AbortSignal): Promise<TaskRecord> {
    for (;;) {
      const task = await this.get(id, record, caller)
      if (isTerminal(task.status)) return task
      await this.#changes.nextChange(task.id, task.pollIntervalMs, signal)
      if (signal.aborted) throw taskRefusal('MCP_EDGE_REQUEST_CANCELLED')
    }
  }

  /** The caller's tasks (2025-11-25 tasks/list), at most `tasks.max_per_owner`. */
  async list(record: SessionRecord, caller: Caller): Promise<TaskRecord[]> {
    const owner = ownerOf(record, caller)
    const route = this.#host.route
    return (await this.#repo.list(owner, route.tasks.max_per_owner)).filter((task) => task.route === route.location)
  }

  /** Cancels the caller's task, wherever it runs; the record as it ends up (maybe finished before). */
  async cancel(id: unknown, record: SessionRecord, caller: Caller): Promise<{ task: TaskRecord; changed: boolean }> {
    const task = await this.get(id, record, caller)
    const { record: after, changed } = await this.#changes.change(task.id, (r) => {
      if (isTerminal(r.status)) return false
      r.status = 'cancelled'
      r.statusMessage = 'Cancelled by the client'
      delete r.inputRequests
      return true
    })
    if (changed) this.#changes.publish(task.id, 'cancel')
    return { task: after ?? task, changed }
  }

  /** Hands the client's answers (2026-07-28 tasks/update) to the task; unknown keys are ignored. */
  async update(id: unknown, responses: unknown, record: SessionRecord, caller: Caller): Promise<void> {
    if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
      throw new McpError(RpcCode.InvalidParams, 'params.inputResponses must be an object keyed by input request')
    }
    const task = await this.get(id, record, caller)
    const { changed } = await this.#changes.change(task.id, (r) => {
      if (isTerminal(r.status) || r.inputRequests === undefined) return false
      let taken = false
      for (const [key, answer] of Object.entries(responses)) {
        if (r.inputRequests[key] === undefined) continue
        ;(r.inputResponses ??= {})[key] = answer
        delete r.inputRequests[key]
        taken = true
      }
      if (taken && Object.keys(r.inputRequests).length === 0) {
        delete r.inputRequests
        r.status = 'working'
      }
      return taken
    })
    if (changed) this.#changes.publish(task.id, 'input')
  }

  close(): void {
    this.#changes.close()
    this.#heartbeat.stop()
    for (const running of this.#running.values()) running.controller.abort('the gateway is closing')
  }

  // ---- running a task ------------------------------------------------------------------------

  async #start(entry: ToolEntry, args: JsonObject, record: SessionRecord, ctx: RequestContext, requestedTtl: unknown, prepared: unknown): Promise<JsonObject> {
    const { tasks, location } = this.#host.route
    const owner = ownerOf(record, ctx.caller)
    if ((await this.#repo.count(owner)) >= tasks.max_per_owner) throw taskRefusal('MCP_EDGE_TOO_MANY_TASKS')
    const maxTtlMs = tasks.max_ttl * 1000
    const ttlMs = typeof requestedTtl === 'number' && requestedTtl > 0 ? Math.min(Math.round(requestedTtl), maxTtlMs) : Math.min(tasks.ttl * 1000, maxTtlMs)
    const now = Date.now()
    const task: TaskRecord = {
      id: randomUUID(),
      route: location,
      owner,
      era: isCoreEra(record) ? 'core' : 'extension',
      tool: entry.tool.name,
      worker: WORKER,
      createdAt: now,
      updatedAt: now,
      ttlMs,
      pollIntervalMs: Math.max(1, Math.round(tasks.poll_interval * 1000)),
      status: 'working',
    }
    // The heartbeat first: a poll right after the answer must find this worker alive.
    await this.#heartbeat.start()
    await this.#repo.create(task)
    const running: Running = { controller: new AbortController(), waiters: new Map() }
    this.#running.set(task.id, running)
    void this.#run(entry, args, task, ctx, running, prepared)
    return createTaskResult(task)
  }

  async #run(entry: ToolEntry, args: JsonObject, task: TaskRecord, origin: RequestContext, running: Running, prepared: unknown): Promise<void> {
    const signal = running.controller.signal
    const info: TaskInfo = { id: task.id, prepared, status: (message) => this.#status(task.id, message) }
    const ctx = new TaskContext(origin, signal, this.#link(task, info, running))
    let outcome: { result?: JsonObject; error?: TaskError } | undefined
    try {
      outcome = { result: (await callTool(entry, args, ctx, this.#host.logger)) as JsonObject }
    } catch (error) {
      if (!signal.aborted) outcome = { error: this.#errorOf(error, task) }
    } finally {
      this.#running.delete(task.id)
      for (const waiter of running.waiters.values()) waiter.reject(new Error('the task ended'))
    }
    if (outcome !== undefined) await this.#finish(task, outcome)
  }

  /** Stores the outcome unless the task already ended (cancelled meanwhile); a result over the bound fails it instead. */
  async #finish(task: TaskRecord, outcome: { result?: JsonObject; error?: TaskError }): Promise<void> {
    const limit = this.#host.route.tasks.max_result_bytes
    if (outcome.result !== undefined) {
      const size = Buffer.byteLength(JSON.stringify(outcome.result))
      if (size > limit) {
        const row = EdgeCode.MCP_EDGE_TASK_RESULT_TOO_LARGE
        outcome = { error: { code: row.rpc, message: `${row.message}: ${size} bytes, over ${limit}`, data: { size, limit } } }
      }
    }
    try {
      await this.#changes.change(task.id, (r) => {
        if (isTerminal(r.status)) return false
        delete r.inputRequests
        delete r.inputResponses
        if (outcome.result !== undefined) {
          r.status = 'completed'
          r.result = outcome.result
        } else {
          r.status = 'failed'
          r.error = outcome.error
          r.statusMessage = outcome.error?.message
        }
        return true
      })
    } catch (error) {
      // The store is away: pollers see the task fail once this worker's heartbeat stops, or find it gone.
      this.#host.logger.warn({ err: error, taskId: task.id }, 'cannot store the outcome of a task')
    }
  }

  #errorOf(error: unknown, task: TaskRecord): TaskError {
    if (error instanceof McpError) return error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data }
    const ref = reportFailure(this.#host.logger, error, { taskId: task.id, tool: task.tool })
    return { code: RpcCode.InternalError, message: internalErrorText(ref) }
  }

  #link(task: TaskRecord, info: TaskInfo, running: Running): TaskLink {
    return {
      info,
      core: task.era === 'core',
      ask: (key, request) => this.#ask(task, running, key, request),
      checks: this.#host.answerChecks,
      viaSession: async (question) => {
        await this.#changes.change(task.id, (r) => (r.status === 'working' ? ((r.status = 'input_required'), true) : false)).catch(() => undefined)
        try {
          return await question()
        } finally {
          await this.#changes.change(task.id, (r) => (r.status === 'input_required' ? ((r.status = 'working'), true) : false)).catch(() => undefined)
        }
      },
      log: (level: LogLevel, data: unknown, logger: string | undefined) => {
        const pinoLevel = level === 'debug' ? 'debug' : level === 'info' || level === 'notice' ? 'info' : level === 'warning' ? 'warn' : 'error'
        this.#host.logger[pinoLevel]({ taskId: task.id, logger, data, mcpLevel: level }, 'handler log')
      },
    }
  }

  /** Puts a question in the task and waits, within the task's TTL, for tasks/update to answer it. */
  #ask(task: TaskRecord, running: Running, key: string, request: TaskInputRequest): Promise<unknown> {
    const signal = running.controller.signal
    if (signal.aborted) return Promise.reject(signal.reason)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(() => reject(new EdgeError('MCP_EDGE_CLIENT_TIMEOUT', 'The client did not answer within the task\'s TTL'))), task.ttlMs)
      // A cancellation must not leave the question waiting out the TTL (and the worker beating for it).
      const onAbort = (): void => settle(() => reject(signal.reason))
      const settle = (then: () => void): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        running.waiters.delete(key)
        then()
      }
      signal.addEventListener('abort', onAbort, { once: true })
      // Waiting before the question is stored: an answer that comes at once finds the waiter.
      running.waiters.set(key, { resolve: (value) => settle(() => resolve(value)), reject: (error) => settle(() => reject(error)) })
      this.#changes.change(task.id, (r) => {
        if (isTerminal(r.status)) return false
        r.inputRequests = { ...r.inputRequests, [key]: request }
        r.status = 'input_required'
        return true
      }).then(
        ({ record }) => {
          if (record?.inputResponses?.[key] !== undefined) void this.#takeAnswers(task.id)
        },
        (error: unknown) => running.waiters.get(key)?.reject(error),
      )
    })
  }

  /** Hands the answers stored for this worker's waiting questions to them (each answer once). */
  async #takeAnswers(id: string): Promise<void> {
    const running = this.#running.get(id)
    if (running === undefined || running.waiters.size === 0) return
    let taken: Record<string, unknown> = {}
    try {
      await this.#repo.change(id, (r) => {
        taken = {}
        for (const key of running.waiters.keys()) {
          if (r.inputResponses?.[key] === undefined) continue
          taken[key] = r.inputResponses[key]
          delete r.inputResponses[key]
        }
        return Object.keys(taken).length > 0
      })
    } catch (error) {
      this.#host.logger.warn({ err: error, taskId: id }, 'cannot take the answers of a task')
      return
    }
    for (const [key, answer] of Object.entries(taken)) running.waiters.get(key)?.resolve(answer)
  }

  async #status(id: string, message: string): Promise<void> {
    try {
      await this.#changes.change(id, (r) => (isTerminal(r.status) || r.statusMessage === message ? false : ((r.statusMessage = message), true)))
    } catch (error) {
      this.#host.logger.warn({ err: error, taskId: id }, 'cannot store a task status message')
    }
  }

  // ---- heartbeat -----------------------------------------------------------------------------

  /** An unfinished task whose worker stopped beating fails, so no poller waits for it forever. */
  async #checkAlive(task: TaskRecord): Promise<TaskRecord> {
    if (isTerminal(task.status)) return task
    const alive = task.worker === WORKER ? this.#running.has(task.id) : await this.#repo.alive(task.worker)
    if (alive) return task
    const row = EdgeCode.MCP_EDGE_TASK_WORKER_GONE
    const { record } = await this.#changes.change(task.id, (r) => {
      if (isTerminal(r.status)) return false
      r.status = 'failed'
      r.error = { code: row.rpc, message: row.message }
      r.statusMessage = row.message
      delete r.inputRequests
      return true
    })
    return record ?? task
  }
}
