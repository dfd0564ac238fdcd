/**
 * The access line of every MCP request, made without pino's generic path: byte for byte the line
 * `logger.info({ sessionId, principal, method, status, era, ms }, 'mcp request')` writes (undefined
 * fields left out, in that order), put together from the logger's own pre-serialized bindings and
 * handed to its destination. pino spends about 1 µs on a line (a loop over the object's keys,
 * serializer lookups, a string per piece); this spends a quarter of that, on every request:
 *
 *   {"level":30,"time":1764680000 123 ,"pid":7,"route":"/mcp" ,"sessionId":"…" ,"method":"tools/call","status": 200 ,"ms": 0.42 ,"msg":"mcp request"}\n
 *   └ kept per second ──────────┘  #  └ bindings, kept ─────┘ └ cached field ┘ └ cached field, status key too ┘  #  └────┘  #   └ constant ───────────┘
 *   (#: digits, written one by one; the rest: bytes copied)
 *
 * Into the gateway's log buffer (the default) the line is written in place: each piece's bytes
 * copied into the batch (LineBuffer.reserve), its numbers digit by digit, so there is no string to
 * build, flatten and copy through Buffer's C++ binding. A field's text is kept with its key, as a
 * string and as UTF-8 bytes; a destination that takes strings (`log.buffer: 0`) gets the same line
 * as one string, as does a line longer than a batch.
 *
 * Only for loggers made by createLogger with no extra `log.redact.paths` (`markPlainAccessLine`):
 * a user's path could name one of these fields, and then pino's redaction must run.
 * test/log/access-line.test.ts compares the two lines.
 */
import { pino, type Logger } from 'pino'
import { capText } from './field-cap.ts'
import { LineBuffer } from './line-buffer.ts'
import { sessionHash } from './redact.ts'

const { chindingsSym, streamSym, levelValSym } = pino.symbols
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
 * A field's text as the line carries it, key included (`,"method":"tools/call"`), kept for reuse: a
 * JSON.stringify per field per request shows in a profile, and the texts repeat (a route's methods,
 * its live sessions, its callers). Cleared when full: clients choose the texts.
 */
export const QUOTED_CACHE_SIZE = 4096

/** A field's text: as a string (for a destination that takes strings) and as UTF-8 bytes (copied into the log buffer's batch). */
interface FieldText { text: string; bytes: Buffer }

/**
 * `text`'s UTF-8 bytes in a buffer of their own: a small Buffer.from is a slice of Node's shared 8 KiB
 * pool, and a cache entry kept for long would keep its whole slab alive (4,096 sessions' fields, each
 * pinning another slab, would be 32 MiB).
 */
function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text))
  bytes.write(text)
  return bytes
}

const fieldText = (text: string): FieldText => ({ text, bytes: ownBytes(text) })
const sessionField = (sessionId: string): FieldText => fieldText(`,"sessionId":${quote(sessionHash(sessionId) as string)}`)
const principalField = (principal: string): FieldText => fieldText(`,"principal":${quote(principal)}`)
// The status follows the method on every line: its key goes with the method's text.
const methodField = (method: string): FieldText => fieldText(`,"method":${quote(method)},"status":`)
const eraField = (era: string): FieldText => fieldText(`,"era":${quote(era)}`)

const MS_KEY = Buffer.from(',"ms":')
const END = Buffer.from(',"msg":"mcp request"}\n')
/** The most bytes of a line's numbers written in place besides the opening's: a status (3), `ms` (10 digits, a point, 2). */
const NUMBERS_MOST = 3 + 13
const DOT = 0x2e
const ZERO = 0x30

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

/** Writes the decimal digits of `n` (an integer, 0 ≤ n < 2³¹) into `batch` at `at`; returns where they end. */
function writeDigits(batch: Buffer, at: number, n: number): number {
  let end = at + 1
  for (let rest = n; rest >= 10; rest = (rest / 10) | 0) end++
  for (let i = end - 1; i >= at; i--) {
    batch[i] = ZERO + (n % 10)
    n = (n / 10) | 0
  }
  return end
}

/** Copies `bytes` into `batch` at `at`; returns where they end. */
function put(batch: Buffer, at: number, bytes: Buffer): number {
  batch.set(bytes, at)
  return at + bytes.length
}

export class AccessLine {
  readonly #logger: Logger
  /** undefined: the logger is not a plain one; lines go through logger.info. */
  readonly #destination: LineDestination | undefined
  /** The destination when it is the gateway's LineBuffer: the line is written into its batch in place. */
  readonly #buffer: LineBuffer | undefined
  /** The line's opening up to the bindings, for the millisecond `#prefixTime` (many lines share one). */
  #prefix = ''
  #prefixTime = -1
  #prefixBindings = ''
  /** The second of the last time written, and its text. */
  #second = -1
  #secondText = ''
  /**
   * The line's opening as bytes, `{"level":30,"time":<second><ms><bindings>`, for the second and the
   * bindings it was made for; each line writes its millisecond's three digits at `#headMs`, then the
   * whole opening goes into the batch in one copy.
   */
  #head: Buffer = Buffer.alloc(0)
  #headSecond = -1
  #headBindings = ''
  #headMs = 0
  /** Session id → its field (the quoted hash); method, era (a handful of protocol versions), principal → theirs. */
  readonly #sessions = new Map<string, FieldText>()
  readonly #methods = new Map<string, FieldText>()
  readonly #eras = new Map<string, FieldText>()
  readonly #principals = new Map<string, FieldText>()

  constructor(logger: Logger) {
    this.#logger = logger
    const fields = logger as unknown as Record<symbol, unknown>
    this.#destination = fields[PLAIN] === true ? (fields[streamSym] as LineDestination) : undefined
    this.#buffer = this.#destination instanceof LineBuffer ? this.#destination : undefined
  }

  /** The line's opening as bytes for `second` and `bindings`, its millisecond digits left to each line. */
  #makeHead(second: number, bindings: string): void {
    const opening = `{"level":${INFO},"time":${second}`
    this.#headSecond = second
    this.#headBindings = bindings
    this.#headMs = opening.length
    this.#head = ownBytes(`${opening}000${bindings}`)
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

  /** Entries in the field caches: each at most QUOTED_CACHE_SIZE. */
  get cached(): { sessions: number; methods: number; eras: number; principals: number } {
    return { sessions: this.#sessions.size, methods: this.#methods.size, eras: this.#eras.size, principals: this.#principals.size }
  }

  /** Writes one request's line when info is enabled; `ms` is written rounded to hundredths, `now` (the clock's, as pino's) as the time. */
  write(sessionId: string | undefined, principal: string | undefined, method: string, status: number, era: string | undefined, ms: number, now = Date.now()): void {
    const logger = this.#logger
    const destination = this.#destination
    if (destination === undefined) {
      // pino's serializers (createLogger's) cap the client-chosen fields.
      if (logger.isLevelEnabled('info')) logger.info({ sessionId, principal, method, status, era, ms: Math.round(ms * 100) / 100 }, 'mcp request')
      return
    }
    const fields = logger as unknown as Record<symbol, unknown>
    // createLogger's levels compare ascending: info is on when the logger's level is at most info's
    // (isLevelEnabled's lookups by level name were a few hundred instructions a request).
    if ((fields[levelValSym] as number) > INFO) return
    const bindings = (fields[chindingsSym] as string | undefined) ?? ''
    // Client-chosen texts are capped (field-cap.ts) before they are quoted or kept in a cache.
    const session = sessionId === undefined ? undefined : cached(this.#sessions, sessionId, sessionField)
    const caller = principal === undefined ? undefined : cached(this.#principals, capText(principal), principalField)
    const methodText = cached(this.#methods, capText(method), methodField)
    const eraText = era === undefined ? undefined : cached(this.#eras, capText(era), eraField)
    if (this.#buffer !== undefined && this.#writeInPlace(this.#buffer, now, bindings, session, caller, methodText, status, eraText, ms)) return
    if (now !== this.#prefixTime || bindings !== this.#prefixBindings) {
      this.#prefixTime = now
      this.#prefixBindings = bindings
      this.#prefix = `{"level":${INFO},"time":${this.#timeText(now)}${bindings}`
    }
    let line = this.#prefix
    if (session !== undefined) line += session.text
    if (caller !== undefined) line += caller.text
    line += methodText.text
    line += status
    if (eraText !== undefined) line += eraText.text
    destination.write(`${line},"ms":${hundredthsText(ms)},"msg":"mcp request"}\n`)
  }

  /**
   * The line written straight into the log buffer's batch, the same bytes as the string: its fields'
   * cached bytes copied, its numbers written digit by digit. False (nothing written) for what the
   * string path writes instead: a line longer than a batch, or a number outside the usual range.
   */
  #writeInPlace(buffer: LineBuffer, now: number, bindings: string, session: FieldText | undefined, caller: FieldText | undefined, method: FieldText, status: number, era: FieldText | undefined, ms: number): boolean {
    const second = Math.floor(now / 1000)
    const hundredths = Math.round(ms * 100)
    if (!(second > 0 && second < 2 ** 31 && Number.isInteger(now)) || !(hundredths >= 0 && hundredths < 2 ** 31) || !(status >= 0 && status < 1000 && Number.isInteger(status))) return false
    if (second !== this.#headSecond || bindings !== this.#headBindings) this.#makeHead(second, bindings)
    const head = this.#head
    let most = head.length + method.bytes.length + MS_KEY.length + END.length + NUMBERS_MOST
    if (session !== undefined) most += session.bytes.length
    if (caller !== undefined) most += caller.bytes.length
    if (era !== undefined) most += era.bytes.length
    const batch = buffer.reserve(most)
    if (batch === undefined) return false
    const milli = now - second * 1000
    const msAt = this.#headMs
    head[msAt] = ZERO + ((milli / 100) | 0)
    head[msAt + 1] = ZERO + (((milli / 10) | 0) % 10)
    head[msAt + 2] = ZERO + (milli % 10)
    let at = put(batch, buffer.used, head)
    if (session !== undefined) at = put(batch, at, session.bytes)
    if (caller !== undefined) at = put(batch, at, caller.bytes)
    at = put(batch, at, method.bytes)
    at = writeDigits(batch, at, status)
    if (era !== undefined) at = put(batch, at, era.bytes)
    // Six bytes: stored one by one, cheaper than a copy's call.
    for (let i = 0; i < MS_KEY.length; i++) batch[at++] = MS_KEY[i]!
    // As hundredthsText writes it: `7`, `12.3`, `0.05`.
    const fraction = hundredths % 100
    at = writeDigits(batch, at, (hundredths - fraction) / 100)
    if (fraction !== 0) {
      batch[at++] = DOT
      batch[at++] = ZERO + ((fraction / 10) | 0)
      if (fraction % 10 !== 0) batch[at++] = ZERO + (fraction % 10)
    }
    buffer.commit(put(batch, at, END))
    return true
  }
}

/** `make(key)`, kept in `cache` (emptied when full). */
function cached(cache: Map<string, FieldText>, key: string, make: (key: string) => FieldText): FieldText {
  let field = cache.get(key)
  if (field === undefined) {
    field = make(key)
    if (cache.size >= QUOTED_CACHE_SIZE) cache.clear()
    cache.set(key, field)
  }
  return field
}
