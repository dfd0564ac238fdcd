/**
 * A response head of the lean HTTP/1.1 client (http1.ts), read by position: the status code, and
 * where each header's name and value lie in the head's text. A value is cut out only when asked for.
 *
 * An exchange asks for about seven headers (four for the connection, three for the transport) of
 * an answer that carries five or six. Cutting every name and value into a Map cost a dozen strings a
 * response (a lower-cased copy of each capitalised name among them) and the Map's growth; the
 * positions are one small array of numbers.
 */

/** Space or tab: the optional whitespace around a header value. */
function isBlank(char: number): boolean {
  return char === 32 || char === 9
}

/** The status code of an `HTTP/1.0 NNN` or `HTTP/1.1 NNN` status line, read by position; undefined for anything else. */
export function statusCode(head: string): number | undefined {
  if (!head.startsWith('HTTP/1.') || (head.charCodeAt(7) !== 48 && head.charCodeAt(7) !== 49) || head.charCodeAt(8) !== 32) return undefined
  let code = 0
  for (let i = 9; i < 12; i++) {
    const digit = head.charCodeAt(i) - 48
    if (!(digit >= 0 && digit <= 9)) return undefined
    code = code * 10 + digit
  }
  return code
}

export class ResponseHead {
  /** The head's text: the status line and the header lines, without the blank line that ends them. */
  readonly text: string
  /** Per header line, four positions in `text`: name start, name end, value start, value end (blanks around each left out). */
  readonly #at: number[] = []

  /** `text` is a head whose status line statusCode() read. */
  constructor(text: string) {
    this.text = text
    const at = this.#at
    // Line by line with indexOf: no array of lines, no copy of the head.
    let eol = text.indexOf('\r\n')
    while (eol >= 0) {
      const start = eol + 2
      eol = text.indexOf('\r\n', start)
      const end = eol < 0 ? text.length : eol
      const colon = text.indexOf(':', start)
      if (colon <= start || colon >= end) continue
      let nameStart = start
      let nameEnd = colon
      while (nameStart < nameEnd && isBlank(text.charCodeAt(nameStart))) nameStart++
      while (nameEnd > nameStart && isBlank(text.charCodeAt(nameEnd - 1))) nameEnd--
      let from = colon + 1
      let to = end
      while (from < to && isBlank(text.charCodeAt(from))) from++
      while (to > from && isBlank(text.charCodeAt(to - 1))) to--
      at.push(nameStart, nameEnd, from, to)
    }
  }

  /** True when the response is HTTP/1.1 (else 1.0). */
  get http11(): boolean {
    return this.text.charCodeAt(7) === 49
  }

  /**
   * The value of header `name`, repeated ones joined with ", "; undefined when absent. `name` is
   * lower case: the head's names compare to it whatever their case.
   */
  get(name: string): string | undefined {
    const text = this.text
    const at = this.#at
    let value: string | undefined
    for (let i = 0; i < at.length; i += 4) {
      const start = at[i]!
      if (at[i + 1]! - start !== name.length || !sameName(text, start, name)) continue
      const one = text.slice(at[i + 2], at[i + 3])
      value = value === undefined ? one : `${value}, ${one}`
    }
    return value
  }
}

/** True when `text` at `start` holds `name` (lower case) in any case: an ASCII comparison, no copy. */
function sameName(text: string, start: number, name: string): boolean {
  for (let j = 0; j < name.length; j++) {
    const char = text.charCodeAt(start + j)
    const lower = name.charCodeAt(j)
    if (char !== lower && !(lower >= 97 && lower <= 122 && char === lower - 32)) return false
  }
  return true
}
