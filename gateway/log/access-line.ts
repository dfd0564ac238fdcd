/**
 * The access line of every MCP request, made without pino's generic path: byte for byte the line
 * `logger.info({ sessionId, principal, method, status, era, ms }, 'mcp request')` writes (undefined
 * fields left out, in that order), put together from the logger's own pre-serialized bindings and
 * handed to its destination. pino spends about 1 µs on a line (a loop over the object's keys,
 * serializer lookups, a string per piece); this spends a quarter of that, on every request:
 *
 *   {"level":30,"time":…,<bindings>   ,"sessionId":"…"   ,"method":"tools/call","status":   200   ,"ms":…,"msg":"mcp request"}
 *   └ one text per millisecond ─────┘ └ cached field ──┘ └ cached field, status key too ┘
 *
 * A field's text is kept with its key and whether it is ASCII: a line that is all ASCII (the usual)
 * goes into the log buffer as latin1 (LineBuffer.writeAscii), one byte per character, without
 * UTF-8's encoding pass.
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

/** A field's text, and whether every character of it is ASCII (one byte each: the buffer copies it as latin1). */
interface FieldText { text: string; ascii: boolean }

const NOT_ASCII = /[^\x00-\x7f]/
const fieldText = (text: string): FieldText => ({ text, ascii: !NOT_ASCII.test(text) })
const sessionField = (sessionId: string): FieldText => fieldText(`,"sessionId":${quote(sessionHash(sessionId) as string)}`)
const principalField = (principal: string): FieldText => fieldText(`,"principal":${quote(principal)}`)
// The status follows the method on every line: its key goes with the method's text.
const methodField = (method: string): FieldText => fieldText(`,"method":${quote(method)},"status":`)
const eraField = (era: string): FieldText => fieldText(`,"era":${quote(era)}`)

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
  /** The destination when it is the gateway's LineBuffer: an ASCII line goes in as latin1 (`writeAscii`). */
  readonly #buffer: LineBuffer | undefined
  /** The line's opening up to the bindings, for the millisecond `#prefixTime` (many lines share one). */
  #prefix = ''
  #prefixTime = -1
  #prefixBindings = ''
  #bindingsAscii = true
  /** The second of the last time written, and its text. */
  #second = -1
  #secondText = ''
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

  /** Writes one request's line when info is enabled; `ms` is written rounded to hundredths. */
  write(sessionId: string | undefined, principal: string | undefined, method: string, status: number, era: string | undefined, ms: number): void {
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
    const now = Date.now()
    const bindings = (fields[chindingsSym] as string | undefined) ?? ''
    if (now !== this.#prefixTime || bindings !== this.#prefixBindings) {
      if (bindings !== this.#prefixBindings) this.#bindingsAscii = !NOT_ASCII.test(bindings)
      this.#prefixTime = now
      this.#prefixBindings = bindings
      this.#prefix = `{"level":${INFO},"time":${this.#timeText(now)}${bindings}`
    }
    let line = this.#prefix
    let ascii = this.#bindingsAscii
    if (sessionId !== undefined) {
      const field = cached(this.#sessions, sessionId, sessionField)
      line += field.text
      ascii &&= field.ascii
    }
    // Client-chosen texts are capped (field-cap.ts) before they are quoted or kept in a cache.
    if (principal !== undefined) {
      const field = cached(this.#principals, capText(principal), principalField)
      line += field.text
      ascii &&= field.ascii
    }
    const methodText = cached(this.#methods, capText(method), methodField)
    line += methodText.text
    ascii &&= methodText.ascii
    line += status
    if (era !== undefined) {
      const field = cached(this.#eras, capText(era), eraField)
      line += field.text
      ascii &&= field.ascii
    }
    line = `${line},"ms":${hundredthsText(ms)},"msg":"mcp request"}\n`
    if (ascii && this.#buffer !== undefined) this.#buffer.writeAscii(line)
    else destination.write(line)
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
