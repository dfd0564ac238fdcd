/** What a Streamable HTTP client transport (streamable-http.ts) is given. */
import type { HttpAgents } from './http-exchange.ts'
import type { TlsOptions } from './connection-options.ts'

export interface StreamableHttpOptions {
  /** The MCP endpoint. */
  url: string | URL
  /** Sent as the `authorization` header of every request, e.g. `Bearer <token>`. */
  authorization?: string
  /** Extra headers for every request. */
  headers?: Record<string, string>
  /**
   * Headers asked for before every exchange (credentials that expire or depend on the caller), over
   * `headers`. Answering the same object as last time costs nothing: the headers built are reused.
   */
  authorize?: () => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>
  /** Open the standalone GET stream after initialize (needed for resource updates and list_changed); default true. */
  standaloneStream?: boolean
  /**
   * Milliseconds to wait for the response head of a notification, response, GET or DELETE; default
   * 30 000. A request's POST is bounded by the request's own timeout instead.
   */
  timeoutMs?: number
  /** Milliseconds before reconnecting a stream when the server sent no `retry`; default 1000. */
  reconnectDelayMs?: number
  /** Reconnection attempts in a row (without an event between them) before a stream is given up; default 3. */
  maxReconnects?: number
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch
  /** TLS settings for an `https:` URL (ca, cert, key, rejectUnauthorized). */
  tls?: TlsOptions
  /** An HTTP proxy (`http://[user:pass@]host:port`), reached with CONNECT; Node's fetch ignores `https_proxy`. */
  proxy?: string | URL
  /**
   * Without `fetch`, `tls` or `proxy`: exchange over node:http(s) on these keep-alive Agents (`keepAliveAgents()`)
   * instead of the global fetch, which costs several times the CPU per exchange (WHATWG streams and
   * Headers). Share one set between transports to the same server, so they share its connections.
   */
  agents?: HttpAgents
  /**
   * close() ends the server's session with DELETE; default true. False when other processes continue
   * the session (a gateway's upstream session is shared data), so only the connection is closed.
   */
  endSessionOnClose?: boolean
  /** Largest JSON body or SSE event accepted from the server, in bytes; a larger one fails its request. Default 16 MiB. */
  maxMessageBytes?: number
}
