/**
 * What one HTTP exchange of the Streamable HTTP client transport answers, whichever wire carried it
 * (http-exchange.ts: fetch, node:https; http1.ts: the lean HTTP/1.1 client).
 */
import type { AbortLike } from '../wire/abort-like.ts'

/** The response of one exchange: its head, and its body read once (as text, or chunk by chunk). */
export interface HttpAnswer {
  readonly status: number
  /** A response header (name in lower case), undefined when absent. */
  header(name: string): string | undefined
  /** The body's chunks, for a stream (SSE); read it once. */
  chunks(): AsyncIterable<Uint8Array>
  /** The whole body as UTF-8; past `limit` bytes the connection is dropped and it rejects with BodyTooLargeError. */
  text(limit: number): Promise<string>
  /**
   * text(), without a promise, when the whole body has already arrived (a small answer comes in the
   * same read as its head); undefined while more is to come. Throws what text() rejects with.
   */
  textNow?(limit: number): string | undefined
  /** Drops the rest of the body (a body already complete leaves the connection to be reused). */
  cancel(): Promise<void>
}

/**
 * One exchange; rejects with the wire's own error (its `code`, or a fetch error's `cause.code`).
 * `signal` is an AbortSignal or a LightAbort (what the transport makes per request: cheaper).
 */
export type HttpExchange = (url: URL, method: string, headers: Readonly<Record<string, string>>, body: string | undefined, signal: AbortLike) => Promise<HttpAnswer>

/** A body larger than the limit `text()` was given. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError'
}
