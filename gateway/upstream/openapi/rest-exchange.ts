/**
 * One REST request within its bounds: the time (the upstream's `timeout`, the caller's cancellation),
 * the response bytes (`max_response_bytes`), and redirects (none by default; up to `max_redirects` to
 * the same origin only). Keep-alive connections, shared by every openapi upstream of the worker.
 *
 *   request ─► 3xx + Location ─► same origin and redirects left? ─► again (303: GET, no body)
 *      │                          └─ no ─► RestFailure "redirect"
 *      └─► 2xx…5xx ─► body read up to the limit ─► RestAnswer   (past it: RestFailure "too_large")
 */
import https from 'node:https'
import { BodyTooLargeError, type HttpAnswer, type HttpExchange } from '../../client/http-answer.ts'
import { keepAliveAgents, nodeExchange } from '../../client/http-exchange.ts'
import type { TlsOptions } from '../../client/connection-options.ts'
import { LightAbort, type AbortLike } from '../../wire/abort-like.ts'

/** What the API answered. */
export interface RestAnswer {
  readonly status: number
  /** `content-type`, lower case, without parameters; empty when absent. */
  readonly mediaType: string
  readonly body: Buffer
}

/** Why a request has no answer to map: each becomes an error result naming the upstream. */
export class RestFailure extends Error {
  readonly kind: 'timeout' | 'cancelled' | 'too_large' | 'redirect' | 'unreachable'
  constructor(kind: RestFailure['kind'], message: string) {
    super(message)
    this.name = 'RestFailure'
    this.kind = kind
  }
}

/** The bounds of one request. */
export interface ExchangeBounds {
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly maxRedirects: number
  /** The only origin requests and redirects may go to. */
  readonly origin: string
  readonly signal?: AbortLike | undefined
}

let shared: HttpExchange | undefined

/** The exchange for an upstream: the worker's shared connections, or (with a `tls:` block) its own for https. */
export function restExchange(tls: TlsOptions | undefined): HttpExchange {
  if (tls === undefined) return (shared ??= nodeExchange(keepAliveAgents()))
  const agents = keepAliveAgents()
  return nodeExchange({ http: agents.http, https: new https.Agent({ keepAlive: true, scheduling: 'lifo', ...tls }) })
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** Sends the request; resolves with the API's answer, rejects with RestFailure. */
export async function exchangeWithin(exchange: HttpExchange, url: URL, method: string, headers: Record<string, string>, body: string | undefined, bounds: ExchangeBounds): Promise<RestAnswer> {
  const abort = new LightAbort()
  const timer = setTimeout(() => abort.abort(new RestFailure('timeout', `no answer within ${bounds.timeoutMs} ms`)), bounds.timeoutMs)
  const cancel = (): void => abort.abort(new RestFailure('cancelled', 'the call was cancelled'))
  bounds.signal?.addEventListener('abort', cancel, { once: true })
  if (bounds.signal?.aborted === true) cancel()
  try {
    let redirects = 0
    for (;;) {
      let answer: HttpAnswer
      try {
        answer = await exchange(url, method, headers, body, abort)
      } catch (error) {
        throw abort.aborted ? abort.reason : new RestFailure('unreachable', `the request failed (${codeOf(error)})`)
      }
      if (REDIRECTS.has(answer.status)) {
        const location = answer.header('location')
        await answer.cancel()
        const next = location === undefined ? undefined : safeNext(location, url)
        if (next === undefined) throw new RestFailure('redirect', `the API redirected (HTTP ${answer.status}) without a usable Location`)
        if (next.origin !== bounds.origin) throw new RestFailure('redirect', `the API redirected (HTTP ${answer.status}) to another origin, which is never followed`)
        if (++redirects > bounds.maxRedirects) throw new RestFailure('redirect', `the API redirected (HTTP ${answer.status}); ${bounds.maxRedirects === 0 ? 'redirects are not followed (openapi.max_redirects)' : `more than ${bounds.maxRedirects} redirects`}`)
        if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === 'POST')) {
          method = 'GET'
          body = undefined
          const { 'content-type': _type, ...rest } = headers
          void _type
          headers = rest
        }
        url = next
        continue
      }
      const type = (answer.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
      return { status: answer.status, mediaType: type, body: await readBounded(answer, bounds.maxBytes, abort) }
    }
  } finally {
    clearTimeout(timer)
    bounds.signal?.removeEventListener('abort', cancel)
  }
}

/** The body, at most `maxBytes`; the connection is dropped past it. */
async function readBounded(answer: HttpAnswer, maxBytes: number, abort: LightAbort): Promise<Buffer> {
  const tooLarge = (): RestFailure => new RestFailure('too_large', `the answer is larger than ${maxBytes} bytes (openapi.max_response_bytes)`)
  if (Number(answer.header('content-length') ?? NaN) > maxBytes) {
    await answer.cancel()
    throw tooLarge()
  }
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of answer.chunks()) {
      size += chunk.byteLength
      if (size > maxBytes) {
        await answer.cancel()
        throw tooLarge()
      }
      chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
      if (abort.aborted) throw abort.reason
    }
  } catch (error) {
    if (error instanceof RestFailure) throw error
    if (error instanceof BodyTooLargeError) throw tooLarge()
    throw abort.aborted ? abort.reason : new RestFailure('unreachable', `the answer broke off (${codeOf(error)})`)
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

function safeNext(location: string, base: URL): URL | undefined {
  try {
    return new URL(location, base)
  } catch {
    return undefined
  }
}

/** The system error code (ECONNREFUSED, ENOTFOUND, …) of a failed request, never its message. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | undefined)?.code ?? (error as { cause?: { code?: unknown } } | undefined)?.cause?.code
  return typeof code === 'string' ? code : 'connection failed'
}
