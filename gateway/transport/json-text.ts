/**
 * The one way untrusted text becomes a JSON-RPC value, for every transport (HTTP bodies, WebSocket
 * frames, stdio lines). V8's JSON.parse takes seconds on a few MB of nested `[` (superlinear in
 * depth) and deep values overflow the stack of every recursive walk after it (the requestState
 * digest, validation, serialisation), so nesting is bounded first, by a scan over the text:
 *
 *   text ─► depth scan (strings skipped with indexOf) ─✗─► -32600 "nested deeper than N", the id if readable
 *              │ ✓
 *              ▼
 *          JSON.parse ─✗─► -32700
 *
 * The scan is linear and touches only structural characters, so it costs a small share of the parse
 * that follows it. The id of a refused message is read by a second scan of its top level, on the
 * refusal path only.
 */
import { McpError, RpcCode } from '../wire/errors.ts'
import type { RequestId } from '../wire/jsonrpc.ts'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d

/** A message refused before it was parsed; `id` is the request's id when its top level names one. */
export class UnparsedMessageError extends McpError {
  readonly id: RequestId | null
  constructor(code: number, message: string, id: RequestId | null) {
    super(code, message)
    this.name = 'UnparsedMessageError'
    this.id = id
  }
}

/** Parses one message's text; throws `UnparsedMessageError` (-32600 too deep, -32700 not JSON). */
export function parseMessageText(text: string, maxDepth: number): unknown {
  if (exceedsDepth(text, maxDepth)) {
    throw new UnparsedMessageError(RpcCode.InvalidRequest, `Invalid Request: JSON nested deeper than ${maxDepth} levels (limits.json_depth)`, topLevelId(text))
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

/**
 * True when `text` holds at most `max` of `[` and `{` in all (in strings too): it cannot nest deeper.
 * Counted with indexOf, which V8 runs as a vectorised search: a quarter of the time of a loop over
 * every character's code, for the few openers of an ordinary message (at most max + 1 calls).
 */
function fewOpeners(text: string, max: number): boolean {
  let openers = 0
  for (let at = text.indexOf('{'); at >= 0; at = text.indexOf('{', at + 1)) if (++openers > max) return false
  for (let at = text.indexOf('['); at >= 0; at = text.indexOf('[', at + 1)) if (++openers > max) return false
  return true
}

/** True when arrays and objects in `text` nest deeper than `max` (strings are skipped, malformed text is scanned as is). */
export function exceedsDepth(text: string, max: number): boolean {
  // An ordinary message has a few openers: one tight pass settles it, without the string skipping
  // (an indexOf per string) that the exact scan needs.
  if (fewOpeners(text, max)) return false
  let depth = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = stringEnd(text, i)
      if (i < 0) return false
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--
    }
  }
  return false
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
    try {
      return JSON.parse(text.slice(start, end + 1)) as string
    } catch {
      return null
    }
  }
  const number = NUMBER.exec(text.slice(start, start + 32))
  if (number === null) return null
  const value = Number(number[0])
  return Number.isSafeInteger(value) ? value : null
}
