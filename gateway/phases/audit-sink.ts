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
import crypto, { createHash } from 'node:crypto'
import { closeSync, openSync } from 'node:fs'
import type { AuditConfig, LogConfig, RouteConfig } from '../config/types.ts'
import { paramsOf, UNREAD_METHOD, type CallEvent, type CallEvents } from '../events/call-events.ts'
import { LineBuffer } from '../log/line-buffer.ts'
import { canonicalJson } from '../wire/canonical-json.ts'
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

/** A string field's JSON, or null. */
function quoted(value: string | undefined): string {
  return value === undefined ? 'null' : JSON.stringify(value)
}

/** SHA-256 in hex: the one-shot crypto.hash where Node has it (20.12+), no Hash object per line. */
const sha256Hex: (text: string) => string = typeof crypto.hash === 'function'
  ? (text) => crypto.hash('sha256', text, 'hex')
  : (text) => createHash('sha256').update(text).digest('hex')

/** The ISO time of the last line, reused by the lines of the same millisecond (a batch's usually are). */
let lastAt = -1
let lastIso = ''
function isoTime(at: number): string {
  if (at !== lastAt) {
    lastAt = at
    lastIso = new Date(at).toISOString()
  }
  return lastIso
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
      for (const event of batch) if (AUDITED_METHODS.has(event.method) || event.method === UNREAD_METHOD) this.#buffer.write(this.text(event))
    })
  }

  /**
   * The line `event` becomes (an AuditLine, newline included), written field by field: no object per
   * line to serialise, each string quoted by JSON.stringify (a name or message may need escapes).
   */
  text(event: CallEvent): string {
    const args = argumentsOf(event)
    const unread = event.method === UNREAD_METHOD
    const digest = args === undefined ? 'null' : `"${sha256Hex(canonicalJson(args))}"`
    const values = args !== undefined && this.#withArguments.has(event.route) ? `,"arguments":${JSON.stringify(args)}` : ''
    return `{"time":"${isoTime(event.at)}","route":${JSON.stringify(event.route)},"method":${unread ? 'null' : JSON.stringify(event.method)},"component":${unread ? 'null' : JSON.stringify(event.component)}` +
      `,"upstream":${quoted(event.upstream)},"sub":${quoted(event.principal)},"iss":${quoted(event.issuer)},"client_id":${quoted(event.client)}` +
      `,"session":${event.session === '' ? 'null' : `"${event.session}"`},"decision":${quoted(event.decision)},"approval":${quoted(event.approval)},"cached":${event.cached === true}` +
      `,"generation":${event.generation},"outcome":"${event.outcome}","error":${quoted(event.error)},"message":${quoted(event.message)}` +
      `,"duration_ms":${event.durationMs},"arguments_sha256":${digest},"pid":${process.pid}${values}}\n`
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
