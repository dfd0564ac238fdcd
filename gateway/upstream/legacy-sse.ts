/**
 * An upstream of the 2024-11-05 HTTP+SSE transport (`{name, sse: URL}`): its transport, built like
 * the other HTTP upstreams' (keep-alive connections of this worker, or an Agent with the upstream's
 * `tls`; its credentials per exchange). Each connection is one upstream session: the link
 * (upstream-link.ts) initializes it, and when the stream ends, initializes a new one on the next
 * request; while the upstream is down the route's health probe paces the attempts (health.ts).
 */
import type { UpstreamConfig } from '../config/types.ts'
import { agentFetch, connectionAgent, type TlsOptions } from '../client/connection-options.ts'
import { fetchExchange, keepAliveAgents, nodeExchange, type HttpAgents } from '../client/http-exchange.ts'
import type { HttpExchange } from '../client/http-answer.ts'
import { LegacySseTransport } from '../client/legacy-sse.ts'
import { DEFAULT_MAX_MESSAGE_BYTES, type Transport } from '../client/transport.ts'

/** Longest wait for the stream and its endpoint event. */
const CONNECT_TIMEOUT_MS = 10_000
/** Requests of one upstream session awaiting their answer on the stream when `max_pending` is not set. */
export const DEFAULT_MAX_PENDING = 1024

let agents: HttpAgents | undefined
const exchanges = new WeakMap<UpstreamConfig, HttpExchange>()

/** How the transport authenticates (connect.ts `TransportCredentials`). */
interface Credentials {
  readonly headers: Readonly<Record<string, string>>
  readonly authorize?: () => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>
}

/** A transport to `upstream`'s stream; `timeoutMs` is the upstream's request timeout. */
export function legacySseTransport(upstream: UpstreamConfig, tls: TlsOptions | undefined, timeoutMs: number, credentials: Credentials): Transport {
  const url = new URL(upstream.sse!)
  return new LegacySseTransport({
    url,
    exchange: exchangeFor(upstream, url, tls),
    headers: credentials.headers,
    authorize: credentials.authorize,
    connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, timeoutMs),
    timeoutMs,
    maxMessageBytes: upstream.max_message_size ?? DEFAULT_MAX_MESSAGE_BYTES,
    maxPending: upstream.max_pending ?? DEFAULT_MAX_PENDING,
  })
}

/** This worker's keep-alive connections; with a client certificate, one Agent of the upstream's own. */
function exchangeFor(upstream: UpstreamConfig, url: URL, tls: TlsOptions | undefined): HttpExchange {
  if (tls === undefined) return nodeExchange((agents ??= keepAliveAgents()))
  let made = exchanges.get(upstream)
  if (made === undefined) {
    const agent = connectionAgent(url, { tls })
    made = fetchExchange(agent === undefined ? fetch : agentFetch(agent))
    exchanges.set(upstream, made)
  }
  return made
}
