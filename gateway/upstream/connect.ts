/**
 * The wire to one upstream, chosen by its config: `http(s)://` Streamable HTTP, `ws(s)://` WebSocket
 * (subprotocol mcp), `sse` the HTTP+SSE transport of 2024-11-05 (legacy-sse.ts), or `command` (stdio),
 * whose transports come from the stdio pool through `StdioTransports`: per key, a Transport that
 * behaves like a dedicated connection to the server.
 *
 * Only the upstream's own credentials travel upstream (its `headers`, or what its `auth:` provider
 * answers per exchange; its `tls` client certificate): the downstream client's Authorization and other
 * headers never reach this layer, so they cannot be forwarded.
 */
import type { UpstreamConfig } from '../config/types.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { keepAliveAgents, type HttpAgents } from '../client/http-exchange.ts'
import { StreamableHttpTransport } from '../client/streamable-http.ts'
import { DEFAULT_MAX_MESSAGE_BYTES, type Transport } from '../client/transport.ts'
import { WebSocketTransport } from '../client/websocket.ts'
import { legacySseTransport } from './legacy-sse.ts'
import { agentFetch, connectionAgent, type TlsOptions } from '../client/connection-options.ts'
import { readFileSync } from 'node:fs'
import type { CredentialHeaders } from './credentials/provider.ts'

/**
 * How a transport authenticates to its upstream: headers fixed for its life (merged once), or asked
 * for per exchange (`authorize`, bound to the link's principal by its caller).
 */
export interface TransportCredentials {
  readonly headers: Readonly<Record<string, string>>
  readonly authorize?: () => CredentialHeaders | Promise<CredentialHeaders>
}

/** Who a stdio transport is for, so that `isolation: session | principal` can pick the child. */
export interface StdioKey {
  readonly session?: string
  readonly principal?: string
  /** The downstream client's initialize params, so a `session`-isolated child sees that client's capabilities and info. */
  readonly initialize?: JsonObject
}

/** The stdio pool's seam: a Transport for `upstream` and `key`, and shutdown of every child. */
export interface StdioTransports {
  transport(upstream: UpstreamConfig, key: StdioKey): Transport
  close(): Promise<void>
  /** Each pool's children and unexpected deaths, by upstream name (the metrics and the admin API read it). */
  status?(): Array<{ upstream: string; children: readonly unknown[]; restarts: number }>
  /** Tells `listener` when `upstream` becomes available (a child is ready) or unavailable (it crashed, it cannot start). */
  watch?(upstream: UpstreamConfig, listener: (available: boolean, reason: string | undefined) => void): void
  /** Starts `upstream`'s children now rather than on first use (the gateway starts). */
  prestart?(upstream: UpstreamConfig): void
  /** True when `upstream` takes 2026-07-28 requests as they are (a boolean once known). */
  speaksStateless?(upstream: UpstreamConfig, timeoutMs: number): boolean | Promise<boolean>
  /** One 2026-07-28 request to `upstream`, as it came; its answer as the server gave it. */
  statelessRequest?(upstream: UpstreamConfig, method: string, params: JsonObject, options: { timeoutMs: number; signal?: AbortSignal; onMessage?: (message: JsonRpcMessage) => void }): Promise<JsonObject>
}

/** The largest message accepted from `upstream`, in bytes (16 MiB when `max_message_size` is not set). */
export function maxMessageBytes(upstream: UpstreamConfig): number {
  return upstream.max_message_size ?? DEFAULT_MAX_MESSAGE_BYTES
}

/**
 * This worker's keep-alive connections to HTTP upstreams, shared by every upstream session (up to 64
 * idle ones per upstream origin are kept). node:http rather than fetch: a proxied call is a second
 * HTTP exchange, and fetch's WHATWG streams cost several times the CPU of the whole local call.
 */
let agents: HttpAgents | undefined

/** Milliseconds to wait for an upstream WebSocket handshake. */
const CONNECT_TIMEOUT_MS = 10_000

/** A fresh transport to `upstream`; throws when it is a stdio upstream and no pool was given. */
export function connect(upstream: UpstreamConfig, key: StdioKey, stdio: StdioTransports | undefined, timeoutMs: number, credentials?: TransportCredentials): Transport {
  if (upstream.url === undefined) {
    if (stdio === undefined) throw new Error(`upstream ${upstream.name}: stdio upstreams need the stdio pool, which this gateway does not have`)
    return stdio.transport(upstream, key)
  }
  const url = new URL(upstream.url)
  const headers = credentials?.headers ?? upstream.headers
  const authorize = credentials?.authorize
  const tls = upstreamTls(upstream)
  if (upstream.sse !== undefined) return legacySseTransport(upstream, tls, timeoutMs, { headers, authorize })
  if (url.protocol === 'ws:' || url.protocol === 'wss:') {
    return new WebSocketTransport({
      url,
      headers,
      authorize,
      tls,
      connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, timeoutMs),
      maxPayload: maxMessageBytes(upstream),
    })
  }
  return new StreamableHttpTransport({
    url,
    // A client certificate needs its own Agent (the transport makes one); the shared ones have none.
    ...(tls === undefined ? { agents: (agents ??= keepAliveAgents()) } : { tls }),
    headers,
    authorize,
    timeoutMs,
    // The upstream session is shared data: a worker dropping its connection must not end it.
    endSessionOnClose: false,
    maxMessageBytes: maxMessageBytes(upstream),
    // A stream that breaks is resumed quickly, patiently enough for an upstream that has not yet seen the old connection go; the request's own timeout bounds the rest.
    reconnectDelayMs: 100,
    maxReconnects: 5,
  })
}

/** PEM files read once per upstream (a reload reads them again): path → contents. */
const tlsFiles = new WeakMap<UpstreamConfig, TlsOptions>()

/** The upstream's `tls:` block as node:tls takes it (files read), or undefined without one. */
export function upstreamTls(upstream: UpstreamConfig): TlsOptions | undefined {
  const config = upstream.tls
  if (config === undefined) return undefined
  let options = tlsFiles.get(upstream)
  if (options === undefined) {
    options = {
      ...(config.ca === undefined ? {} : { ca: readFileSync(config.ca) }),
      ...(config.cert === undefined ? {} : { cert: readFileSync(config.cert) }),
      ...(config.key === undefined ? {} : { key: readFileSync(config.key) }),
      ...(config.servername === undefined ? {} : { servername: config.servername }),
    }
    tlsFiles.set(upstream, options)
  }
  return options
}

const fetches = new WeakMap<UpstreamConfig, typeof fetch>()

/**
 * The fetch for one-off exchanges with an HTTP upstream (stateless requests, the DELETE that ends a
 * session): the global one, or one on an Agent with the upstream's `tls` (its client certificate).
 */
export function upstreamFetch(upstream: UpstreamConfig): typeof fetch {
  const tls = upstreamTls(upstream)
  if (tls === undefined || upstream.url === undefined) return fetch
  let made = fetches.get(upstream)
  if (made === undefined) {
    const agent = connectionAgent(new URL(upstream.url), { tls })
    made = agent === undefined ? fetch : agentFetch(agent)
    fetches.set(upstream, made)
  }
  return made
}
