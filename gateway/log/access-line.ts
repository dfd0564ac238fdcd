/**
 * The access line of every MCP request, made without pino's generic path: byte for byte the line
 * `logger.info({ sessionId, principal, method, status, era, ms }, 'mcp request')` writes (undefined
 * fields left out, in that order), put together from the logger's own pre-serialized bindings and
 * handed to its destination. pino spends about 1 µs on a line (a loop over the object's keys,
 * serializer lookups, a string per piece); this spends a quarter of that, on every request.
 *
 * Only for loggers made by createLogger with no extra `log.redact.paths` (`markPlainAccessLine`):
 * a user's path could name one of these fields, and then pino's redaction must run.
 * test/log/access-line.test.ts compares the two lines.
 */
import { pino, type Logger } from 'pino'
import { sessionHash } from './redact.ts'

const { chindingsSym, streamSym } = pino.symbols
/** Set on a root logger (children inherit it through their prototype): its access lines may take the short path. */
const PLAIN = Symbol('mcp-edge.plainAccessLine')
const INFO = 30

/** Marks a logger made by createLogger whose redaction cannot touch the access line's fields. */
export function markPlainAccessLine(logger: Logger): void {
  ;(logger as unknown as Record<symbol, boolean>)[PLAIN] = true
}

/** What the destination of a pino logger takes. */
interface LineDestination { write(line: string): unknown }

/** JSON text of a string, as pino writes it (the same valid JSON as JSON.stringify). */
const quote = (text: string): string => JSON.stringify(text)

export class AccessLine {
  readonly #logger: Logger
  /** undefined: the logger is not a plain one; lines go through logger.info. */
  readonly #destination: LineDestination | undefined

  constructor(logger: Logger) {
    this.#logger = logger
    const fields = logger as unknown as Record<symbol, unknown>
    this.#destination = fields[PLAIN] === true ? (fields[streamSym] as LineDestination) : undefined
  }

  /** Writes one request's line when info is enabled. */
  write(sessionId: string | undefined, principal: string | undefined, method: string, status: number, era: string | undefined, ms: number): void {
    const logger = this.#logger
    if (!logger.isLevelEnabled('info')) return
    const destination = this.#destination
    if (destination === undefined) {
      logger.info({ sessionId, principal, method, status, era, ms }, 'mcp request')
      return
    }
    const chindings = (logger as unknown as Record<symbol, string>)[chindingsSym]
    let line = `{"level":${INFO},"time":${Date.now()}${chindings}`
    if (sessionId !== undefined) line += `,"sessionId":${quote(sessionHash(sessionId) as string)}`
    if (principal !== undefined) line += `,"principal":${quote(principal)}`
    line += `,"method":${quote(method)},"status":${status}`
    if (era !== undefined) line += `,"era":${quote(era)}`
    destination.write(`${line},"ms":${Number.isFinite(ms) ? ms : null},"msg":"mcp request"}\n`)
  }
}
