/**
 * One HTTP exchange of the Streamable HTTP client transport, up to its response head, on one of two
 * wires:
 *
 *   fetchExchange(fetch)   the WHATWG fetch (the global one, or a caller's: a browser, a test's recorder)
 *   nodeExchange(agents)   keep-alive connections: http: on the lean HTTP/1.1 client (http1.ts), https: on
 *                          node:https; no WHATWG streams or Headers objects; what a gateway uses for its
 *                          upstreams, where a proxied call's second HTTP exchange is most of its cost
 *
 * Both answer with an `HttpAnswer`; the transport never sees which wire carried it.
 */
import type http from 'node:http'
import https from 'node:https'
import { BodyTooLargeError, type HttpAnswer, type HttpExchange } from './http-answer.ts'
import { Http1Pool } from './http1.ts'
import { realSignal } from '../wire/abort-like.ts'

/** Exchanges on a WHATWG `fetch`. */
export function fetchExchange(fetchImpl: typeof fetch): HttpExchange {
  return async (url, method, headers, body, signal) => {
    const response = await fetchImpl(url, { method, headers, body, signal: realSignal(signal) })
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

/** The keep-alive connections of `nodeExchange`: the lean HTTP/1.1 pool for http:, an Agent for https:. */
export interface HttpAgents {
  readonly http: Http1Pool
  readonly https: https.Agent
}

/**
 * Keep-alive connections for `nodeExchange`. They are not capped (each open SSE stream holds one, as
 * it would on fetch); idle ones are kept up to `maxIdle` per origin, reused last-in first-out, and
 * closed when the server's `Keep-Alive: timeout` says it will close them.
 */
export function keepAliveAgents(maxIdle = 64): HttpAgents {
  return { http: new Http1Pool(maxIdle), https: new https.Agent({ keepAlive: true, maxFreeSockets: maxIdle, scheduling: 'lifo' }) }
}

/** Exchanges on `agents`: http: on the lean HTTP/1.1 pool (http1.ts), https: on node:https. */
export function nodeExchange(agents: HttpAgents): HttpExchange {
  const plain = agents.http.exchange()
  const secure = httpsExchange(agents.https)
  return (url, ...rest) => (url.protocol === 'http:' ? plain(url, ...rest) : secure(url, ...rest))
}

function httpsExchange(agent: https.Agent): HttpExchange {
  // The URL's parts, taken apart once per URL rather than on every request.
  let target: { url: URL; host: string; port: string; path: string } | undefined
  return (url, method, headers, body, signal) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      if (target?.url !== url) target = { url, host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port, path: url.pathname + url.search }
      const { host, port, path } = target
      const request = https.request({ host, port, path, method, headers, agent, signal: realSignal(signal) })
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
