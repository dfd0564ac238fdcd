/**
 * One HTTP exchange of the Streamable HTTP client transport, up to its response head, on one of two
 * wires:
 *
 *   fetchExchange(fetch)   the WHATWG fetch (the global one, or a caller's: a browser, a test's recorder)
 *   nodeExchange(agents)   node:http(s) with keep-alive Agents: no WHATWG streams or Headers objects, the
 *                          body read with 'data' events; what a gateway uses for its upstreams, where a
 *                          proxied call's second HTTP exchange is most of its cost
 *
 * Both answer with an `HttpAnswer`; the transport never sees which wire carried it.
 */
import http from 'node:http'
import https from 'node:https'

/** The response of one exchange: its head, and its body read once (as text, or chunk by chunk). */
export interface HttpAnswer {
  readonly status: number
  /** A response header (name in lower case), undefined when absent. */
  header(name: string): string | undefined
  /** The body's chunks, for a stream (SSE); read it once. */
  chunks(): AsyncIterable<Uint8Array>
  /** The whole body as UTF-8; past `limit` bytes the connection is dropped and it rejects with BodyTooLargeError. */
  text(limit: number): Promise<string>
  /** Drops the rest of the body (a body already complete leaves the connection to be reused). */
  cancel(): Promise<void>
}

/** One exchange; rejects with the wire's own error (its `code`, or a fetch error's `cause.code`). */
export type HttpExchange = (url: URL, method: string, headers: Readonly<Record<string, string>>, body: string | undefined, signal: AbortSignal) => Promise<HttpAnswer>

/** A body larger than the limit `text()` was given. */
export class BodyTooLargeError extends Error {}

/** Exchanges on a WHATWG `fetch`. */
export function fetchExchange(fetchImpl: typeof fetch): HttpExchange {
  return async (url, method, headers, body, signal) => {
    const response = await fetchImpl(url, { method, headers, body, signal })
    return {
      status: response.status,
      header: (name) => response.headers.get(name) ?? undefined,
      chunks: () => (response.body ?? emptyBody()) as unknown as AsyncIterable<Uint8Array>,
      text: async (limit) => {
        if (Number(response.headers.get('content-length') ?? NaN) > limit) {
          await response.body?.cancel()
          throw new BodyTooLargeError()
        }
        if (response.body === null) return ''
        const chunks: Uint8Array[] = []
        let size = 0
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          size += chunk.byteLength
          if (size > limit) {
            await response.body.cancel().catch(() => undefined)
            throw new BodyTooLargeError()
          }
          chunks.push(chunk)
        }
        return Buffer.concat(chunks).toString('utf8')
      },
      cancel: async () => {
        await response.body?.cancel().catch(() => undefined)
      },
    }
  }
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}

/** The keep-alive Agents of `nodeExchange`: one per scheme. */
export interface HttpAgents {
  readonly http: http.Agent
  readonly https: https.Agent
}

/**
 * Keep-alive Agents for `nodeExchange`. Sockets are not capped (each open SSE stream holds one, as
 * it would on fetch); idle ones are kept up to `maxFreeSockets` per origin, reused last-in first-out,
 * and closed when the server's `Keep-Alive: timeout` says it will close them.
 */
export function keepAliveAgents(maxFreeSockets = 64): HttpAgents {
  const options = { keepAlive: true, maxFreeSockets, scheduling: 'lifo' as const }
  return { http: new http.Agent(options), https: new https.Agent(options) }
}

/** Exchanges on node:http(s) with `agents`. */
export function nodeExchange(agents: HttpAgents): HttpExchange {
  // The URL's parts, taken apart once per URL rather than on every request.
  let target: { url: URL; secure: boolean; host: string; port: string; path: string } | undefined
  return (url, method, headers, body, signal) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      if (target?.url !== url) target = { url, secure: url.protocol === 'https:', host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port, path: url.pathname + url.search }
      const { secure, host, port, path } = target
      const request = (secure ? https : http).request({ host, port, path, method, headers, agent: secure ? agents.https : agents.http, signal })
      request.once('error', reject)
      request.once('response', (response) => {
        request.off('error', reject)
        // A failure after the head (a reset mid-body) surfaces on the response's reads.
        request.on('error', () => undefined)
        resolve(nodeAnswer(response))
      })
      request.end(body)
    })
}

function nodeAnswer(response: http.IncomingMessage): HttpAnswer {
  return {
    status: response.statusCode ?? 0,
    header: (name) => {
      const value = response.headers[name]
      return Array.isArray(value) ? value.join(', ') : value
    },
    chunks: () => response,
    text: (limit) =>
      new Promise<string>((resolve, reject) => {
        if (Number(response.headers['content-length'] ?? NaN) > limit) {
          response.destroy()
          return reject(new BodyTooLargeError())
        }
        let first: Buffer | undefined
        let more: Buffer[] | undefined
        let size = 0
        response.on('data', (chunk: Buffer) => {
          size += chunk.byteLength
          if (size > limit) {
            response.destroy()
            return reject(new BodyTooLargeError())
          }
          if (first === undefined) first = chunk
          else (more ??= [first]).push(chunk)
        })
        response.once('end', () => resolve(more !== undefined ? Buffer.concat(more).toString('utf8') : first?.toString('utf8') ?? ''))
        response.once('error', reject)
        // 'aborted' without 'error': the connection closed before the body ended.
        response.once('close', () => {
          if (!response.complete) reject(Object.assign(new Error('the connection closed before the body ended'), { code: 'ECONNRESET' }))
        })
      }),
    cancel: () => {
      // A short or finished body is drained, so the connection goes back to the pool; a long or endless one is cut.
      const length = Number(response.headers['content-length'] ?? NaN)
      if (response.complete || length <= 65_536 || response.statusCode === 202 || response.statusCode === 204) response.resume()
      else response.destroy()
      return Promise.resolve()
    },
  }
}
