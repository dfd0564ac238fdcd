/**
 * Checks that part of a text is exactly one JSON object, without building it: for a proxy that
 * passes an upstream's result on as the upstream wrote it (result-text.ts), where parsing it only to
 * serialise it again was ~40 % of the hop's JSON work (the echo's: 6,400 and 7,400 instructions).
 * Checking it costs ~4,100 (callgrind; bench/README.md, "The hop's second serialisation").
 *
 *   value ─► { ─► "key" : value (, "key" : value)* }      one loop over the text, containers on a
 *            [ ─► value (, value)* ]                       stack of their own (no recursion, so no
 *            "string" · number · true · false · null       nesting depth overflows it)
 *
 * Sound, not complete: whatever it accepts, JSON.parse accepts and reads as one object (not an
 * array). It refuses some valid text it has no need to pass on as it is, and the caller then parses
 * the text the usual way: a control character between tokens (a line break or a tab: an SSE `data:`
 * line holds no line break), a key with an escape, a key repeated in its object (see memberValue),
 * an object of more than 32 keys.
 */

/** Not one object, or one this scan does not read: parse it the usual way. */
export const NOT_PLAIN = 0
/** One object, whose own `isError` member is not `true`. */
export const PLAIN = 1
/** One object whose own `isError` member is `true` (the caller reads such a result, so it parses it). */
export const IS_ERROR = 2

const SPACE = 0x20
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const MINUS = 0x2d
const PLUS = 0x2b
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39
const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
/** A container's closing character is its opening one + 2: `{` 0x7b, `}` 0x7d; `[` 0x5b, `]` 0x5d. */
const CLOSING = 2
const IS_ERROR_KEY = '"isError"'

/** Set by stringEnd: whether the string it read holds an escape. */
let escaped = false
/**
 * A control character anywhere: none may stand raw in a JSON string, and outside strings the only
 * ones allowed are blanks, of which this scan takes spaces alone. Found by one regular expression
 * over the text (V8's compiled matcher), so strings are then skipped quote to quote with indexOf.
 */
const CONTROL = /[\u0000-\u001f]/g
/**
 * The scan's state lives in the module: each scan runs to its end synchronously, and arrays kept from
 * one scan to the next are written by index, never shortened (setting an array's length is a call into
 * V8's runtime). `open`: the containers open, innermost last (OPEN_OBJECT or OPEN_ARRAY), `depth` of them.
 */
const open: number[] = []
let depth = 0
/** Where the next backslash at or after the scan's position is (the text's length: none); scanObject starts it at 0. */
let backslashAt = 0

function blanks(text: string, i: number, end: number): number {
  while (i < end && text.charCodeAt(i) === SPACE) i++
  return i
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
}

/**
 * Index after the closing quote of the string that opens at `i`; -1 when it is not a JSON string that
 * ends before `end`. The text holds no control character (scanObject made sure): a string without a
 * backslash is valid from quote to quote.
 */
function stringEnd(text: string, i: number, end: number): number {
  escaped = false
  const close = text.indexOf('"', i + 1)
  if (close < 0 || close >= end) return -1
  // The next backslash is looked for again only once the scan has passed it: one pass over the text in all.
  if (backslashAt <= i) {
    const at = text.indexOf('\\', i + 1)
    backslashAt = at < 0 ? text.length : at
  }
  if (backslashAt > close) return close + 1
  return escapedStringEnd(text, i, end)
}

/** stringEnd for a string that holds a backslash: each escape checked. */
function escapedStringEnd(text: string, i: number, end: number): number {
  escaped = true
  for (i++; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) return i + 1
    if (c !== BACKSLASH) continue
    if (++i >= end) return -1
    const e = text.charCodeAt(i)
    if (e === 0x75) {
      // \uXXXX: four hex digits, and the string still has to close after them.
      if (i + 4 >= end) return -1
      if (!isHex(text.charCodeAt(i + 1)) || !isHex(text.charCodeAt(i + 2)) || !isHex(text.charCodeAt(i + 3)) || !isHex(text.charCodeAt(i + 4))) return -1
      i += 4
    } else if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
      return -1
    }
  }
  return -1
}

/** Index after the number that starts at `i` (RFC 8259's grammar); -1 when none does. */
function numberEnd(text: string, i: number, end: number): number {
  if (i < end && text.charCodeAt(i) === MINUS) i++
  if (i >= end) return -1
  const first = text.charCodeAt(i++)
  if (first !== ZERO) {
    if (!isDigit(first)) return -1
    while (i < end && isDigit(text.charCodeAt(i))) i++
  }
  if (i < end && text.charCodeAt(i) === DOT) {
    const from = ++i
    while (i < end && isDigit(text.charCodeAt(i))) i++
    if (i === from) return -1
  }
  if (i < end && (text.charCodeAt(i) | 0x20) === 0x65) {
    i++
    if (i < end && (text.charCodeAt(i) === PLUS || text.charCodeAt(i) === MINUS)) i++
    const from = i
    while (i < end && isDigit(text.charCodeAt(i))) i++
    if (i === from) return -1
  }
  return i
}

/**
 * The keys read so far of each object open, as start and end positions in the text (pairs): a flat
 * list of `keyCount` entries, each object's keys from its entry in `firstKey` on (an object's are
 * dropped when it closes).
 */
const keys: number[] = []
let keyCount = 0
const firstKey: number[] = []
/** The objects open: firstKey's entries in use. */
let objects = 0
/** More keys than this in one object are not compared pairwise: the scan refuses the text instead. */
const MAX_KEYS = 32

/** True when `text` holds the same characters at `a` and `b`, `length` of them. */
function sameText(text: string, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (text.charCodeAt(a + k) !== text.charCodeAt(b + k)) return false
  return true
}

/** Index after `word` when the text holds it at `i` before `end`; -1 otherwise. */
function wordEnd(text: string, i: number, end: number, word: string): number {
  return i + word.length <= end && text.startsWith(word, i) ? i + word.length : -1
}

/**
 * What `text` from `start` to `end` is: PLAIN or IS_ERROR when it is exactly one JSON object (spaces
 * around it allowed), NOT_PLAIN otherwise (see above for what that includes).
 */
export function scanObject(text: string, start: number, end: number): number {
  let i = blanks(text, start, end)
  if (i >= end || text.charCodeAt(i) !== OPEN_OBJECT) return NOT_PLAIN
  CONTROL.lastIndex = start
  const control = CONTROL.exec(text)
  if (control !== null && control.index < end) return NOT_PLAIN
  depth = 0
  keyCount = 0
  objects = 0
  backslashAt = 0
  let isError = false
  /** The value that starts at i is the object's own `isError`. */
  let isErrorValue = false
  for (;;) {
    // A value starts at i.
    if (i >= end) return NOT_PLAIN
    if (isErrorValue) {
      isErrorValue = false
      isError = wordEnd(text, i, end, 'true') > 0
    }
    const c = text.charCodeAt(i)
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      i = blanks(text, i + 1, end)
      if (i < end && text.charCodeAt(i) === c + CLOSING) {
        i++
      } else {
        open[depth++] = c
        if (c === OPEN_OBJECT) {
          firstKey[objects++] = keyCount
          i = memberValue(text, i, end, depth === 1)
          if (i < 0) return NOT_PLAIN
          isErrorValue = isErrorMember
        }
        continue
      }
    } else if (c === QUOTE) {
      i = stringEnd(text, i, end)
    } else if (c === 0x74) {
      i = wordEnd(text, i, end, 'true')
    } else if (c === 0x66) {
      i = wordEnd(text, i, end, 'false')
    } else if (c === 0x6e) {
      i = wordEnd(text, i, end, 'null')
    } else {
      i = numberEnd(text, i, end)
    }
    if (i < 0) return NOT_PLAIN
    // After a value: containers close, or a comma leads to the next value.
    for (;;) {
      i = blanks(text, i, end)
      if (depth === 0) return i === end ? (isError ? IS_ERROR : PLAIN) : NOT_PLAIN
      if (i >= end) return NOT_PLAIN
      const next = text.charCodeAt(i)
      const container = open[depth - 1]!
      if (next === COMMA) {
        i = blanks(text, i + 1, end)
        if (container === OPEN_OBJECT) {
          i = memberValue(text, i, end, depth === 1)
          if (i < 0) return NOT_PLAIN
          isErrorValue = isErrorMember
        }
        break
      }
      if (next !== container + CLOSING) return NOT_PLAIN
      depth--
      if (container === OPEN_OBJECT) keyCount = firstKey[--objects]!
      i++
    }
  }
}

/** Set by memberValue: the member it read is the object's own `isError`. */
let isErrorMember = false

/**
 * Reads an object member's `"key" :` at `i`; the index where its value starts, -1 when there is no
 * such key, or when the key is one this scan does not pass on: one with an escape (two spellings of
 * one key would compare unequal), or one the object already has. Parsers differ on a repeated key
 * (JSON.parse keeps the last, others the first or refuse the text), so a text the gateway passes on
 * has none: whoever reads it reads what the gateway read. `own`: a member of the scanned object itself.
 */
function memberValue(text: string, i: number, end: number, own: boolean): number {
  isErrorMember = false
  if (i >= end || text.charCodeAt(i) !== QUOTE) return -1
  const keyStart = i
  i = stringEnd(text, i, end)
  if (i < 0 || escaped) return -1
  const length = i - keyStart
  const from = firstKey[objects - 1]!
  if (keyCount - from >= MAX_KEYS * 2) return -1
  for (let k = from; k < keyCount; k += 2) if (keys[k + 1]! - keys[k]! === length && sameText(text, keys[k]!, keyStart, length)) return -1
  keys[keyCount++] = keyStart
  keys[keyCount++] = i
  if (own && length === IS_ERROR_KEY.length && text.startsWith(IS_ERROR_KEY, keyStart)) isErrorMember = true
  i = blanks(text, i, end)
  if (i >= end || text.charCodeAt(i) !== COLON) return -1
  return blanks(text, i + 1, end)
}
