/**
 * The audit record (`audit:`): a built-in log-phase subscriber that writes one JSON line per audited
 * call (tools/call, prompts/get, resources/read, task requests, elicitation and sampling rounds, and
 * the refusals of any of them before dispatch) through the log's buffered writer, to its own file or
 * descriptor. Off by default; when off, nothing subscribes and the request path pays nothing.
 *
 *   answer sent ─► CallEvents ─► batch (setImmediate, off the request path) ─► audited method?
 *        ─► one line: time, route, principal (sub, iss, client id), session hash, component, upstream,
 *           decision, approval, generation, outcome, duration, sha-256 of the arguments (their values
 *           only where the route sets `audit_arguments`) ─► LineBuffer (log.buffer, log.flush_interval)
 *   clean stop ─► close(): the last batch delivered, then flushed (bounded like the logger's flush)
 *
 * The writer is the access log's (log/line-buffer.ts): a full or stuck reader makes it drop lines past
 * MAX_READY_BYTES held (counted), never block the gateway; a regular file is written synchronously, in
 * whole batches, so the workers of a cluster appending to one file never cut each other's lines.
 */
import { createHash } from 'node:crypto'
import { closeSync, openSync } from 'node:fs'
import type { AuditConfig, LogConfig, RouteConfig } from '../config/types.ts'
import { paramsOf, UNREAD_METHOD, type CallEvent, type CallEvents } from '../events/call-events.ts'
import { LineBuffer } from '../log/line-buffer.ts'
import { EdgeError } from '../wire/errors.ts'

/** The methods the audit record keeps: component use, task requests, and the rounds a call asks its client. */
export const AUDITED_METHODS: ReadonlySet<string> = new Set([
  'tools/call', 'prompts/get', 'resources/read',
  'tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/list', 'tasks/update',
  'elicitation/create', 'sampling/createMessage',
])

/** How long close() waits for the last lines to be written (the logger's own flush bound). */
const FLUSH_TIMEOUT_MS = 2000
/** Bytes a batch gathers when `log.buffer` is 0 (unbuffered logs): the audit record is always batched. */
const DEFAULT_BUFFER = 32 * 1024

/** One line of the audit record: the stable field names docs/phases.md documents. */
export interface AuditLine {
  time: string
  route: string
  /** null for a request refused before its body was read: nothing says what it asked. */
  method: string | null
  component: string | null
  upstream: string | null
  sub: string | null
  iss: string | null
  client_id: string | null
  session: string | null
  decision: string | null
  approval: string | null
  /** True when a tools/call was answered from the result cache (the tool did not run). */
  cached: boolean
  generation: number
  outcome: 'ok' | 'error'
  error: string | null
  message: string | null
  duration_ms: number
  arguments_sha256: string | null
  arguments?: unknown
  pid: number
}

/** JSON with object keys sorted at every depth: the same arguments always digest the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const keys = Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`
}

/** The arguments a request carried: a tool's or prompt's `arguments`, else a task's id, else a URI. */
function argumentsOf(event: CallEvent): unknown {
  const params = paramsOf(event)
  if (params === undefined) return undefined
  return params.arguments ?? params.taskId ?? params.uri
}

export class AuditSink {
  readonly #buffer: LineBuffer
  readonly #fd: number
  readonly #owned: boolean
  /** Routes whose lines carry the arguments themselves. */
  readonly #withArguments: ReadonlySet<string>
  #closed = false

  constructor(config: AuditConfig, log: Pick<LogConfig, 'buffer' | 'flush_interval'>, routes: readonly RouteConfig[]) {
    this.#owned = 'file' in config
    try {
      this.#fd = 'file' in config ? openSync(config.file, 'a') : config.fd
    } catch (error) {
      throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `audit.file: cannot open ${'file' in config ? config.file : ''}: ${(error as Error).message}`)
    }
    this.#buffer = new LineBuffer(this.#fd, log.buffer > 0 ? log.buffer : DEFAULT_BUFFER, log.flush_interval * 1000)
    this.#withArguments = new Set(routes.filter((route) => route.audit_arguments).map((route) => route.location))
  }

  /** Writes the audited calls of `events` from now on; returns the unsubscribe. */
  attach(events: CallEvents): () => void {
    return events.subscribe((batch) => {
      for (const event of batch) if (AUDITED_METHODS.has(event.method) || event.method === UNREAD_METHOD) this.#buffer.write(`${JSON.stringify(this.line(event))}\n`)
    })
  }

  /** The line `event` becomes. */
  line(event: CallEvent): AuditLine {
    const args = argumentsOf(event)
    const line: AuditLine = {
      time: new Date(event.at).toISOString(),
      route: event.route,
      method: event.method === UNREAD_METHOD ? null : event.method,
      component: event.method === UNREAD_METHOD ? null : event.component,
      upstream: event.upstream ?? null,
      sub: event.principal ?? null,
      iss: event.issuer ?? null,
      client_id: event.client ?? null,
      session: event.session === '' ? null : event.session,
      decision: event.decision ?? null,
      approval: event.approval ?? null,
      cached: event.cached === true,
      generation: event.generation,
      outcome: event.outcome,
      error: event.error ?? null,
      message: event.message ?? null,
      duration_ms: event.durationMs,
      arguments_sha256: args === undefined ? null : createHash('sha256').update(canonicalJson(args)).digest('hex'),
      pid: process.pid,
    }
    if (args !== undefined && this.#withArguments.has(event.route)) line.arguments = args
    return line
  }

  /** Writes out what is held (after the call events still waiting for their batch); bounded by FLUSH_TIMEOUT_MS. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // The last calls' events are delivered on setImmediate: let that batch reach the buffer first.
    await new Promise<void>((resolve) => setImmediate(resolve))
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, FLUSH_TIMEOUT_MS)
      timer.unref()
      this.#buffer.flush(() => {
        clearTimeout(timer)
        resolve()
      })
    })
    this.#buffer.close()
    if (this.#owned) {
      try {
        closeSync(this.#fd)
      } catch {
        // Already closed: nothing is left to write to it.
      }
    }
  }
}
