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
import { capText } from './field-cap.ts'
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

/**
 * Quoted texts kept for reuse: a JSON.stringify per field per request shows in a profile, and the
 * texts repeat (a route's methods, its live sessions). Cleared when full: clients choose the texts.
 */
export const QUOTED_CACHE_SIZE = 4096

/** `ms` rounded to hundredths as JavaScript prints it (`12.3`, `0.05`, `7`), without a double-to-string. */
function hundredthsText(ms: number): string {
  const hundredths = Math.round(ms * 100)
  if (!(hundredths >= 0 && hundredths < 2 ** 31)) return Number.isFinite(ms) ? String(hundredths / 100) : 'null'
  const fraction = hundredths % 100
  const whole = (hundredths - fraction) / 100
  if (fraction === 0) return `${whole}`
  if (fraction % 10 === 0) return `${whole}.${fraction / 10}`
  return fraction < 10 ? `${whole}.0${fraction}` : `${whole}.${fraction}`
}

export class AccessLine {
  readonly #logger: Logger
  /** undefined: the logger is not a plain one; lines go through logger.info. */
  readonly #destination: LineDestination | undefined
  /** The line's opening up to the bindings, for the millisecond `#prefixTime` (many lines share one). */
  #prefix = ''
  #prefixTime = -1
  #prefixBindings = ''
  /** The second of the last time written, and its text. */
  #second = -1
  #secondText = ''
  /** Session id → its quoted hash; method (and era: a handful of protocol versions) → its quoted text. */
  readonly #sessions = new Map<string, string>()
  readonly #methods = new Map<string, string>()

  constructor(logger: Logger) {
    this.#logger = logger
    const fields = logger as unknown as Record<symbol, unknown>
    this.#destination = fields[PLAIN] === true ? (fields[streamSym] as LineDestination) : undefined
  }

  /**
   * `now` as `${now}` writes it, from the text of its seconds (kept for the next thousand ms) and its
   * milliseconds: a double-to-string per millisecond was ~1,400 instructions of a request that came
   * alone in its millisecond (callgrind, one call at a time). Both parts are small integers until 2038.
   */
  #timeText(now: number): string {
    const second = Math.floor(now / 1000)
    if (!(second > 0 && second < 2 ** 31 && Number.isInteger(now))) return `${now}`
    if (second !== this.#second) {
      this.#second = second
      this.#secondText = `${second}`
    }
    const ms = now - second * 1000
    return `${this.#secondText}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}`
  }

  /** Entries in the quoted-text caches (sessions, methods): each at most QUOTED_CACHE_SIZE. */
  get cached(): { sessions: number; methods: number } {
    return { sessions: this.#sessions.size, methods: this.#methods.size }
  }

  /** Writes one request's line when info is enabled; `ms` is written rounded to hundredths. */
  write(sessionId: string | undefined, principal: string | undefined, method: string, status: number, era: string | undefined, ms: number): void {
    const logger = this.#logger
    if (!logger.isLevelEnabled('info')) return
    const destination = this.#destination
    if (destination === undefined) {
      // pino's serializers (createLogger's) cap the client-chosen fields.
      logger.info({ sessionId, principal, method, status, era, ms: Math.round(ms * 100) / 100 }, 'mcp request')
      return
    }
    const now = Date.now()
    const bindings = (logger as unknown as Record<symbol, string | undefined>)[chindingsSym] ?? ''
    if (now !== this.#prefixTime || bindings !== this.#prefixBindings) {
      this.#prefixTime = now
      this.#prefixBindings = bindings
      this.#prefix = `{"level":${INFO},"time":${this.#timeText(now)}${bindings}`
    }
    let line = this.#prefix
    if (sessionId !== undefined) line += `,"sessionId":${cached(this.#sessions, sessionId, quotedHash)}`
    // Client-chosen texts are capped (field-cap.ts) before they are quoted or kept in a cache.
    if (principal !== undefined) line += `,"principal":${quote(capText(principal))}`
    line += `,"method":${cached(this.#methods, capText(method), quote)},"status":${status}`
    if (era !== undefined) line += `,"era":${cached(this.#methods, capText(era), quote)}`
    destination.write(`${line},"ms":${hundredthsText(ms)},"msg":"mcp request"}\n`)
  }
}

const quotedHash = (sessionId: string): string => quote(sessionHash(sessionId) as string)

/** `make(key)`, kept in `cache` (emptied when full). */
function cached(cache: Map<string, string>, key: string, make: (key: string) => string): string {
  let text = cache.get(key)
  if (text === undefined) {
    text = make(key)
    if (cache.size >= QUOTED_CACHE_SIZE) cache.clear()
    cache.set(key, text)
  }
  return text
}
