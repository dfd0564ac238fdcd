/**
 * The built-in filter (`filter:` on a route): what it does to a result before it leaves, in order —
 *
 *   isError tool result whose text carries a stack trace ─► text replaced by a reference (logged whole)
 *   every string of the result ─► each `redact` match replaced by [REDACTED]   (copied only where one matched)
 *   the result's JSON over `max_result_bytes` ─► withheld (the error table's MCP_EDGE_RESULT_WITHHELD)
 *
 * Costs a walk of the result (redaction) and one JSON.stringify (the cap), only on a route that sets them.
 */
import { EdgeError } from '../wire/errors.ts'
import type { FilterConfig } from '../config/types.ts'

export const REDACTED = '[REDACTED]'
/** A V8/Node stack frame line (`    at fn (file:1:2)`), or Python's traceback header. */
const STACK_TRACE = /\n\s+at [^\n]*(?:\d+:\d+\)?|\(native\)|<anonymous>\)?)|Traceback \(most recent call last\):/

export type Verdict = { result: unknown } | { withheld: string } | { stackTrace: string }

export class BuiltinFilter {
  readonly #redact: RegExp | undefined
  readonly #maxBytes: number | undefined
  readonly #stackTraces: boolean

  constructor(config: FilterConfig, location: string) {
    try {
      this.#redact = config.redact.length === 0 ? undefined : new RegExp(config.redact.map((source) => `(?:${source})`).join('|'), 'g')
    } catch (error) {
      throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `route ${location}: filter.redact: ${(error as Error).message}`)
    }
    this.#maxBytes = config.max_result_bytes
    this.#stackTraces = config.stack_traces === 'refuse'
  }

  /** What leaves instead of `result` of `method`. */
  apply(method: string, result: unknown): Verdict {
    if (this.#stackTraces && method === 'tools/call') {
      const trace = stackTraceIn(result)
      if (trace !== undefined) return { stackTrace: trace }
    }
    const redacted = this.#redact === undefined ? result : redactStrings(result, this.#redact)
    if (this.#maxBytes !== undefined && Buffer.byteLength(JSON.stringify(redacted)) > this.#maxBytes) {
      return { withheld: `result over ${this.#maxBytes} bytes` }
    }
    return { result: redacted }
  }
}

/** The text of an isError result that carries a stack trace, if it does. */
function stackTraceIn(result: unknown): string | undefined {
  const object = result as { isError?: unknown; content?: unknown }
  if (object?.isError !== true || !Array.isArray(object.content)) return undefined
  for (const item of object.content as Array<{ type?: unknown; text?: unknown }>) {
    if (item?.type === 'text' && typeof item.text === 'string' && STACK_TRACE.test(item.text)) return item.text
  }
  return undefined
}

/** `value` with every match of `pattern` in its strings replaced; the same object where nothing matched. */
export function redactStrings(value: unknown, pattern: RegExp): unknown {
  if (typeof value === 'string') {
    pattern.lastIndex = 0
    return pattern.test(value) ? value.replace(pattern, REDACTED) : value
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const item = redactStrings(value[i], pattern)
      if (item !== value[i]) (copy ??= value.slice())[i] = item
    }
    return copy ?? value
  }
  if (value !== null && typeof value === 'object') {
    let copy: Record<string, unknown> | undefined
    for (const key of Object.keys(value)) {
      const field = (value as Record<string, unknown>)[key]
      const item = redactStrings(field, pattern)
      if (item !== field) (copy ??= { ...(value as Record<string, unknown>) })[key] = item
    }
    return copy ?? value
  }
  return value
}
