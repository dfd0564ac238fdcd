/**
 * Splits a child's output into lines with a bound: a line longer than `maxBytes` is never held
 * whole. Its bytes past the bound are dropped as they arrive and `onOversize` hears of it (with the
 * line's first bytes) when its newline comes, so an endless line costs at most `maxBytes` of memory.
 */

export interface LineSplitterOptions {
  maxBytes: number
  /** Bytes of an oversize line kept for `onOversize` (at most `maxBytes`). */
  headBytes: number
  onLine(line: string): void
  onOversize(head: string, bytes: number): void
}

/** Newline-delimited framing over Buffers (UTF-8 never has 0x0A inside a character, so splitting bytes is safe). */
export class LineSplitter {
  readonly #options: LineSplitterOptions
  #parts: Buffer[] = []
  #length = 0
  /** Bytes seen of the current oversize line; 0 while the line fits. */
  #over = 0
  #head = ''

  constructor(options: LineSplitterOptions) {
    this.#options = options
  }

  push(chunk: Buffer): void {
    let start = 0
    while (start < chunk.length) {
      const end = chunk.indexOf(10, start)
      if (end === -1) {
        this.#keep(chunk.subarray(start))
        return
      }
      this.#finish(chunk.subarray(start, end))
      start = end + 1
    }
  }

  /** The stream ended: a last line without its newline is still a line. */
  end(): void {
    if (this.#length > 0 || this.#over > 0) this.#finish(Buffer.alloc(0))
  }

  #keep(part: Buffer): void {
    if (this.#over > 0) {
      this.#over += part.length
      return
    }
    if (this.#length + part.length <= this.#options.maxBytes) {
      this.#parts.push(part)
      this.#length += part.length
      return
    }
    this.#parts.push(part)
    this.#head = Buffer.concat(this.#parts).subarray(0, this.#options.headBytes).toString('utf8')
    this.#over = this.#length + part.length
    this.#parts = []
    this.#length = 0
  }

  #finish(last: Buffer): void {
    if (this.#over > 0 || this.#length + last.length > this.#options.maxBytes) {
      const bytes = this.#over > 0 ? this.#over + last.length : this.#length + last.length
      const head = this.#over > 0 ? this.#head : Buffer.concat([...this.#parts, last]).subarray(0, this.#options.headBytes).toString('utf8')
      this.#reset()
      this.#options.onOversize(head, bytes)
      return
    }
    const line = this.#parts.length === 0 ? last : Buffer.concat([...this.#parts, last])
    this.#reset()
    let text = line.toString('utf8')
    if (text.endsWith('\r')) text = text.slice(0, -1)
    if (text.trim() !== '') this.#options.onLine(text)
  }

  #reset(): void {
    this.#parts = []
    this.#length = 0
    this.#over = 0
    this.#head = ''
  }
}
