/**
 * TLS and HTTP-proxy options of the HTTP and WebSocket clients. Node 20's global fetch takes neither
 * (it ignores `https_proxy`, and its undici cannot be imported to make a dispatcher), so a transport
 * given either option talks through one node:http(s) Agent: TLS settings on it, and with a proxy a
 * CONNECT tunnel per connection. The WebSocket client (`ws`) takes the same Agent; the HTTP client gets
 * a fetch made on it (`agentFetch`). Without these options nothing here runs: the global fetch stays.
 *
 *   proxy?  no ─► https.Agent({ca, cert, key, rejectUnauthorized})
 *           yes ─► CONNECT host:port to the proxy ─► 200 ─► TLS over the tunnel (https:, wss:) or the tunnel itself
 */
import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import type { Duplex } from 'node:stream'
import { Readable } from 'node:stream'
import tls from 'node:tls'

/** TLS settings for `https:` and `wss:` URLs, as node:tls takes them. */
export interface TlsOptions {
  /** Trusted CA certificates (PEM) instead of Node's bundle: a private CA, a self-signed server. */
  ca?: string | Buffer | Array<string | Buffer>
  /** A client certificate (PEM) and its key, for servers that ask for one (mutual TLS). */
  cert?: string | Buffer
  key?: string | Buffer
  /** Check the server's certificate; default true. False only against a test server. */
  rejectUnauthorized?: boolean
  /** The name sent as SNI and checked against the server's certificate, when it differs from the URL's host. */
  servername?: string
}

/** What a transport may be given: TLS settings, and an HTTP proxy URL (`http://[user:pass@]host:port`). */
export interface ConnectionOptions {
  tls?: TlsOptions
  proxy?: string | URL
}

/** The Agent for `target`'s scheme under `options`, or undefined when no option asks for one. */
export function connectionAgent(target: URL, options: ConnectionOptions): http.Agent | undefined {
  const { tls: tlsOptions = {}, proxy } = options
  if (proxy === undefined && options.tls === undefined) return undefined
  const secure = target.protocol === 'https:' || target.protocol === 'wss:'
  if (proxy === undefined) return secure ? new https.Agent({ ...tlsOptions, keepAlive: true }) : undefined
  const proxyUrl = new URL(proxy)
  if (proxyUrl.protocol !== 'http:') throw new TypeError(`proxy must be an http:// URL (got ${proxyUrl.protocol})`)
  return secure ? new TunnelingHttpsAgent(proxyUrl, tlsOptions) : new TunnelingHttpAgent(proxyUrl)
}

type Created = (error: Error | null, socket?: Duplex) => void

/** Opens a CONNECT tunnel to `host:port` through `proxy`; calls back with the raw socket. */
function tunnel(proxy: URL, host: string, port: number, done: Created): void {
  const headers: Record<string, string> = { host: `${host}:${port}` }
  if (proxy.username !== '') {
    const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
    headers['proxy-authorization'] = `Basic ${Buffer.from(credentials).toString('base64')}`
  }
  const request = http.request({ host: proxy.hostname, port: Number(proxy.port || 80), method: 'CONNECT', path: `${host}:${port}`, headers })
  request.once('connect', (response, socket) => {
    if (response.statusCode === 200) return done(null, socket)
    socket.destroy()
    done(new Error(`the proxy ${proxy.host} refused CONNECT ${host}:${port}: HTTP ${response.statusCode}`))
  })
  request.once('error', (error) => done(new Error(`the proxy ${proxy.host} cannot be reached: ${error.message}`, { cause: error })))
  request.end()
}

// Node's Agent takes a createConnection that answers through its callback (and returns nothing).
class TunnelingHttpAgent extends http.Agent {
  readonly #proxy: URL
  constructor(proxy: URL) {
    super({ keepAlive: true })
    this.#proxy = proxy
  }

  override createConnection(options: http.ClientRequestArgs, done: Created): undefined {
    tunnel(this.#proxy, String(options.host ?? 'localhost'), Number(options.port ?? 80), done)
    return undefined
  }
}

class TunnelingHttpsAgent extends https.Agent {
  readonly #proxy: URL
  readonly #tls: TlsOptions
  constructor(proxy: URL, tlsOptions: TlsOptions) {
    super({ ...tlsOptions, keepAlive: true })
    this.#proxy = proxy
    this.#tls = tlsOptions
  }

  override createConnection(options: https.RequestOptions, done: Created): undefined {
    const host = String(options.host ?? 'localhost')
    tunnel(this.#proxy, host, Number(options.port ?? 443), (error, socket) => {
      if (error !== null) return done(error)
      // SNI only for names (not addresses); the certificate is checked against `host` either way.
      const servername = this.#tls.servername ?? options.servername ?? (isIP(host) === 0 ? host : undefined)
      const secured = tls.connect({ ...this.#tls, socket, host, servername, ALPNProtocols: ['http/1.1'] })
      secured.once('secureConnect', () => done(null, secured))
      secured.once('error', (failure) => done(failure))
    })
    return undefined
  }
}

/**
 * A fetch over node:http(s) through `agent`: what the HTTP transport needs of fetch (method, headers,
 * a string body, an AbortSignal; status, headers and a streamed body back), nothing more.
 */
export function agentFetch(agent: http.Agent): typeof fetch {
  return ((input: string | URL | Request, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : input)
      const client = url.protocol === 'https:' ? https : http
      const headers = init.headers as Record<string, string> | undefined
      const request = client.request(url, { method: init.method ?? 'GET', headers, agent, signal: init.signal ?? undefined })
      request.once('response', (response) => {
        const answer = new Headers()
        for (const [name, value] of Object.entries(response.headers)) {
          if (Array.isArray(value)) for (const item of value) answer.append(name, item)
          else if (value !== undefined) answer.set(name, value)
        }
        const status = response.statusCode ?? 502
        const empty = status === 204 || status === 304 || init.method === 'HEAD'
        if (empty) response.resume()
        resolve(new Response(empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>), { status, statusText: response.statusMessage, headers: answer }))
      })
      request.once('error', (error) => reject(new TypeError('fetch failed', { cause: error })))
      request.end(typeof init.body === 'string' ? init.body : undefined)
    })) as typeof fetch
}
