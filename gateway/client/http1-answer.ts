/**
 * The response of one exchange on a lean HTTP/1.1 connection (http1.ts): the connection pushes the
 * body's chunks as they arrive, and the reader takes them once, as text (bounded) or as chunks (a
 * stream). A reader that stops early, or a body over its bound, cancels the rest at the connection.
 */
import { BodyTooLargeError, type HttpAnswer } from './http-answer.ts'
import type { ResponseHead } from './http1-head.ts'

/** What an answer needs of its connection: to drop the rest of the exchange. */
export interface AnswerSource {
  cancel(answer: Http1Answer): void
}

/** A response whose body arrives through `push`, read once as text or as chunks. */
export class Http1Answer implements HttpAnswer {
  readonly status: number
  readonly #head: ResponseHead
  readonly #connection: AnswerSource
  #chunks: Buffer[] = []
  #size = 0
  #ended = false
  #error: Error | undefined
  #wake: (() => void) | undefined
  #limit = Infinity

  constructor(status: number, head: ResponseHead, connection: AnswerSource) {
    this.status = status
    this.#head = head
    this.#connection = connection
  }

  /** Header `name` (lower case), repeated ones joined with ", ". */
  header(name: string): string | undefined {
    return this.#head.get(name)
  }

  push(chunk: Buffer): void {
    this.#size += chunk.length
    if (this.#size > this.#limit) return this.fail(new BodyTooLargeError())
    this.#chunks.push(chunk)
    this.#wake?.()
  }

  end(): void {
    this.#ended = true
    this.#wake?.()
  }

  fail(error: Error): void {
    if (this.#ended) return
    this.#error ??= error
    this.#ended = true
    this.#connection.cancel(this)
    this.#wake?.()
  }

  async text(limit: number): Promise<string> {
    this.#bound(limit)
    while (!this.#ended) await new Promise<void>((resolve) => (this.#wake = resolve))
    this.#wake = undefined
    return this.#whole()
  }

  textNow(limit: number): string | undefined {
    if (!this.#ended) return undefined
    this.#bound(limit)
    return this.#whole()
  }

  /** Holds the body to `limit` bytes from now on; throws BodyTooLargeError (the rest dropped) when it is past it already. */
  #bound(limit: number): void {
    // An ended body's size is all there is; before the end, its Content-Length says what is coming.
    if (this.#size > limit || (!this.#ended && Number(this.#head.get('content-length') ?? NaN) > limit)) {
      // What arrived before this call was not held to the limit; a body already complete has ended
      // without an error (fail() would change nothing), so the refusal is made here, whatever the timing.
      this.#chunks = []
      this.fail(new BodyTooLargeError())
      throw new BodyTooLargeError()
    }
    this.#limit = limit
  }

  /** The ended body as text; throws the error that ended it. */
  #whole(): string {
    if (this.#error !== undefined) throw this.#error
    return this.#chunks.length === 1 ? this.#chunks[0]!.toString('utf8') : Buffer.concat(this.#chunks).toString('utf8')
  }

  async *chunks(): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        while (this.#chunks.length > 0) yield this.#chunks.shift()!
        if (this.#ended) break
        await new Promise<void>((resolve) => (this.#wake = resolve))
        this.#wake = undefined
      }
      if (this.#error !== undefined) throw this.#error
    } finally {
      // Left early (the reader stopped): the rest is not wanted.
      if (!this.#ended) this.cancel()
    }
  }

  cancel(): Promise<void> {
    if (!this.#ended) {
      this.#ended = true
      this.#chunks = []
      this.#connection.cancel(this)
      this.#wake?.()
    }
    return Promise.resolve()
  }
}
