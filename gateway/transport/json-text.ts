/**
 * The one way untrusted text becomes a JSON-RPC value, for every transport (HTTP bodies, WebSocket
 * frames, stdio lines). V8's JSON.parse takes seconds on a few MB of nested `[` (superlinear in
 * depth) and deep values overflow the stack of every recursive walk after it (the requestState
 * digest, validation, serialisation), so nesting is bounded first, by a scan over the text. Depth
 * alone does not bound the parse's work: 4 MiB of `{},` is 1.4 M empty objects, a second of
 * JSON.parse, and one object of 300 k keys costs as much. So the same scan counts the values the
 * parse would build (each `[`, `{` and `,` outside strings) against `limits.json_values`:
 *
 *   text ─► scan (strings skipped with indexOf) ─✗─► -32600 "nested deeper than N" / "more than N values", the id if readable
 *              │ ✓
 *              ▼
 *          JSON.parse ─✗─► -32700
 *
 * The scan is linear and touches only structural characters, so it costs a small share of the parse
 * that follows it; an ordinary message is settled by its length (shorter than a bound: cannot break
 * it) or by counting `{`, `[` and `,` with indexOf alone.
 * The id of a refused message is read by a second scan of its top level, on the refusal path only.
 */
import { McpError, RpcCode } from '../wire/errors.ts'
import { isId, MAX_ID_LENGTH, type RequestId } from '../wire/jsonrpc.ts'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const COMMA = 0x2c

/** A message refused before it was parsed; `id` is the request's id when its top level names one. */
export class UnparsedMessageError extends McpError {
  readonly id: RequestId | null
  constructor(code: number, message: string, id: RequestId | null) {
    super(code, message)
    this.name = 'UnparsedMessageError'
    this.id = id
  }
}

/** How much structure one message may have: `limits.json_depth` and `limits.json_values`. */
export interface JsonBounds {
  readonly json_depth: number
  readonly json_values: number
}

/** Parses one message's text; throws `UnparsedMessageError` (-32600 too deep or too many values, -32700 not JSON). */
export function parseMessageText(text: string, bounds: JsonBounds): unknown {
  const over = overBounds(text, bounds.json_depth, bounds.json_values)
  if (over !== WITHIN) {
    const reason = over === TOO_DEEP
      ? `JSON nested deeper than ${bounds.json_depth} levels (limits.json_depth)`
      : `JSON with more than ${bounds.json_values} values: arrays, objects and their members (limits.json_values)`
    throw new UnparsedMessageError(RpcCode.InvalidRequest, `Invalid Request: ${reason}`, topLevelId(text))
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new UnparsedMessageError(RpcCode.ParseError, `Parse error: ${(error as Error).message}`, null)
  }
}

/** Index of the quote that closes the string opened at `open`, or -1 when it never closes. */
function stringEnd(text: string, open: number): number {
  let at = open
  for (;;) {
    at = text.indexOf('"', at + 1)
    if (at < 0) return -1
    let backslashes = 0
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++
    if ((backslashes & 1) === 0) return at
  }
}

const WITHIN = 0
const TOO_DEEP = 1
const TOO_MANY = 2

/**
 * True when `text` holds at most `maxDepth` of `[` and `{` in all and at most `maxValues` of them and
 * `,` together (in strings too): it can neither nest deeper nor hold more values. Counted with
 * indexOf, which V8 runs as a vectorised search: a quarter of the time of a loop over every
 * character's code, for the few openers and commas of an ordinary message.
 */
function fewStructures(text: string, maxDepth: number, maxValues: number): boolean {
  // Each opener and comma is a character: a text no longer than a bound cannot break it, uncounted
  // (a usual tools/call body is shorter than the default depth bound, 128, and every body within
  // body_limit but over 100,000 values is long).
  const length = text.length
  if (length <= maxValues && length <= maxDepth) return true
  let openers = 0
  for (let at = text.indexOf('{'); at >= 0; at = text.indexOf('{', at + 1)) if (++openers > maxDepth) return false
  for (let at = text.indexOf('['); at >= 0; at = text.indexOf('[', at + 1)) if (++openers > maxDepth) return false
  if (length <= maxValues) return true
  let values = openers
  for (let at = text.indexOf(','); at >= 0; at = text.indexOf(',', at + 1)) if (++values > maxValues) return false
  return values <= maxValues
}

/**
 * Which bound `text` breaks: WITHIN, TOO_DEEP (arrays and objects nested deeper than `maxDepth`) or
 * TOO_MANY (more than `maxValues` of `[`, `{` and `,`: the containers and the members beyond each
 * container's first). Strings are skipped; malformed text is scanned as is.
 */
function overBounds(text: string, maxDepth: number, maxValues: number): number {
  // An ordinary message has a few openers and commas: one tight pass settles it, without the string
  // skipping (an indexOf per string) that the exact scan needs.
  if (fewStructures(text, maxDepth, maxValues)) return WITHIN
  let depth = 0
  let values = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = stringEnd(text, i)
      if (i < 0) return WITHIN
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return TOO_DEEP
      if (++values > maxValues) return TOO_MANY
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--
    } else if (c === COMMA) {
      if (++values > maxValues) return TOO_MANY
    }
  }
  return WITHIN
}

/** True when arrays and objects in `text` nest deeper than `max` (strings are skipped, malformed text is scanned as is). */
export function exceedsDepth(text: string, max: number): boolean {
  return overBounds(text, max, Infinity) === TOO_DEEP
}

/** True when `text` holds more than `max` of `[`, `{` and `,` outside strings (the values JSON.parse would build, bar one per container). */
export function exceedsValues(text: string, max: number): boolean {
  return overBounds(text, Infinity, max) === TOO_MANY
}

const ID_KEY = '"id"'
const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/
const SPACE = /[ \t\r\n]*/y

/**
 * The `id` member of the top-level object, read without parsing the rest (which may be too deep to
 * parse); null when there is none or it is not a string or a safe integer.
 */
export function topLevelId(text: string): RequestId | null {
  let depth = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = stringEnd(text, i)
      if (end < 0) return null
      if (depth === 1 && end - i === 3 && text.startsWith(ID_KEY, i)) {
        const value = idValue(text, end + 1)
        if (value !== undefined) return value
      }
      i = end
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--
    }
  }
  return null
}

/** The id after a top-level `"id"` key ending at `from`; undefined when `"id"` was a value, not a key. */
function idValue(text: string, from: number): RequestId | null | undefined {
  SPACE.lastIndex = from
  SPACE.exec(text)
  if (text.charCodeAt(SPACE.lastIndex) !== 0x3a) return undefined
  SPACE.lastIndex++
  SPACE.exec(text)
  const start = SPACE.lastIndex
  if (text.charCodeAt(start) === QUOTE) {
    const end = stringEnd(text, start)
    if (end < 0) return null
    // Escapes only make the parsed id shorter: one longer than an id may be is not read (nor echoed).
    if (end - start - 1 > MAX_ID_LENGTH * 6) return null
    try {
      const id = JSON.parse(text.slice(start, end + 1)) as string
      return isId(id) ? id : null
    } catch {
      return null
    }
  }
  const number = NUMBER.exec(text.slice(start, start + 32))
  if (number === null) return null
  const value = Number(number[0])
  return Number.isSafeInteger(value) ? value : null
}
