/**
 * One upstream session as this worker holds it: an McpClient on a transport to the upstream, for one
 * downstream session (or one stateless pool key). The session itself is data in the store, so the
 * first worker that needs it initializes it and every other one continues it without a handshake:
 *
 *   request ─► client? ──no──► stored session with an id (HTTP)? ──yes──► resume (no initialize)
 *                 │                       │ no
 *                 │                       └──► initialize (the downstream client's capabilities) ─► save
 *                 ▼
 *              client.request ─► the upstream forgot the session ─► initialize once more, retry once (if safe)
 *
 * "Forgot the session" is 404 (the spec's answer) or a 400 that names the session (the official SDK's
 * servers after a restart: "Bad Request: No valid session ID provided"), to a request that carried a
 * session id. The request goes again when the upstream refused it unread (an error status to its
 * POST) or when it changes nothing (lists, reads, ping); a call whose stream was lost mid-way does not.
 *
 * A connection that closes underneath (a WebSocket dropped, the upstream restarted) is forgotten at
 * once: its requests in flight fail, and the next request opens a new one with a new handshake. While
 * the upstream is down, the route's health refuses calls at once and its probe retries with backoff,
 * so reconnection attempts are paced by the probe, not by the callers.
 *
 * Credentials: the link asks its upstream's `CredentialProvider` for the headers of every exchange, as
 * `who` (the caller of the latest request; a link serves one principal: one downstream session, or one
 * principal's stateless pool). An upstream 401 goes through `afterRejection` (credentials/rejection.ts).
 */
import { CLIENT_PROTOCOL_VERSION, McpClient } from '../client/client.ts'
import { ProtocolError, RpcError, TransportError } from '../client/errors.ts'
import type { RequestOptions } from '../client/protocol.ts'
import type { InitializeResult } from '../client/types.ts'
import type { UpstreamConfig } from '../config/types.ts'
import type { ClientCapabilities, Implementation, JsonObject } from '../wire/mcp-types.ts'
import type { UpstreamSession } from '../store/store.ts'
import { connect, upstreamFetch, type StdioKey, type StdioTransports, type TransportCredentials } from './connect.ts'
import { isFixed, type CredentialProvider } from './credentials/provider.ts'
import { afterRejection, isRejected } from './credentials/rejection.ts'
import type { Caller } from '../wire/caller.ts'

/** What a link needs from its route: how to reach the upstream, what to declare, where to save. */
export interface LinkHost {
  readonly stdio: StdioTransports | undefined
  /** Milliseconds one upstream request may take. */
  timeoutMs(upstream: UpstreamConfig): number
  /** How the gateway authenticates to `upstream`. */
  credentials(upstream: UpstreamConfig): CredentialProvider
  /** Installs the relay of the upstream's requests and notifications on a fresh client. */
  relay(client: McpClient, link: UpstreamLink): void
  /** Keeps the session where every worker finds it (a no-op for stateless pool links). */
  save(link: UpstreamLink, session: UpstreamSession): Promise<void>
  /** Called once a new upstream session exists (to forward the downstream's log level). */
  opened(client: McpClient, link: UpstreamLink): Promise<void>
}

/** Who the link is for, as the upstream sees it. */
export interface LinkOwner {
  /** The downstream session id; empty for a stateless pool link. */
  readonly session: string
  readonly principal: string | undefined
  readonly clientCapabilities: ClientCapabilities
  readonly clientInfo: Implementation | undefined
  /** The version the downstream negotiated, asked of the upstream too; the client's default when undefined. */
  readonly protocolVersion: string | undefined
}

const GATEWAY_CLIENT: Implementation = { name: 'mcp-edge', version: '0.1.0' }

export class UpstreamLink {
  readonly upstream: UpstreamConfig
  readonly owner: LinkOwner
  /** When a request last used the link (the idle sweep closes old ones). */
  lastUsed = Date.now()
  /**
   * The caller of the latest request, whom the upstream credential speaks for (the same principal
   * every time: a link never serves two). Undefined for the gateway's own traffic (the probe).
   */
  who: Caller | undefined
  readonly #host: LinkHost
  #client: Promise<McpClient> | undefined
  /** The client #client resolved to, once it has. */
  #current: McpClient | undefined
  /** The upstream session id this link's client carries. */
  #sessionId: string | undefined
  #closed = false

  constructor(host: LinkHost, upstream: UpstreamConfig, owner: LinkOwner) {
    this.#host = host
    this.upstream = upstream
    this.owner = owner
  }

  /** The server's initialize result once known. */
  server: InitializeResult | undefined

  /**
   * A ready client: this link's, or one continuing `stored` when another worker made (or remade) the
   * session since. Rejects when the upstream cannot be reached.
   */
  client(stored: UpstreamSession | undefined): Promise<McpClient> {
    this.lastUsed = Date.now()
    if (this.#client !== undefined && (stored?.id === undefined || stored.id === this.#sessionId)) return this.#client
    if (this.#client !== undefined) this.#drop()
    const opening = this.#open(stored)
    this.#client = opening
    // A failed open is forgotten, so the next request tries again.
    opening.catch(() => {
      if (this.#client === opening) this.#client = undefined
    })
    return opening
  }

  /**
   * Sends one request; an upstream that forgot the session (HTTP 404) gets one new session and the
   * request once more. A link whose client is ready sends at once, without waiting a turn for it.
   */
  request(method: string, params: JsonObject | undefined, options: RequestOptions, stored: UpstreamSession | undefined): Promise<JsonObject> {
    const current = this.#current
    if (current === undefined || (stored?.id !== undefined && stored.id !== this.#sessionId)) return this.#requestOpening(method, params, options, stored)
    this.lastUsed = Date.now()
    const sessionId = this.#sessionId
    return current.request(method, params, options).catch((error: unknown) => this.#renewed(error, sessionId, method, params, options))
  }

  async #requestOpening(method: string, params: JsonObject | undefined, options: RequestOptions, stored: UpstreamSession | undefined): Promise<JsonObject> {
    let client: McpClient
    try {
      client = await this.client(stored)
    } catch (error) {
      if (isRejected(error) && !this.#closed) return this.#reauthorized(error, method, params, options, stored)
      throw error
    }
    const sessionId = this.#sessionId
    try {
      return await client.request(method, params, options)
    } catch (error) {
      return this.#renewed(error, sessionId, method, params, options, stored)
    }
  }

  /**
   * After `error` on the session `sessionId`: when the upstream forgot that session, a new one (made
   * once, whoever of the requests in flight notices first) and the request once more if safe; else
   * the error. A refused credential (401) goes to the provider's verdict instead.
   */
  async #renewed(error: unknown, sessionId: string | undefined, method: string, params: JsonObject | undefined, options: RequestOptions, stored?: UpstreamSession): Promise<JsonObject> {
    if (isRejected(error) && !this.#closed) return this.#reauthorized(error, method, params, options, stored)
    if (this.#closed || sessionId === undefined || !sessionForgotten(error)) throw error
    // Another request on the same lost session may have begun the new one already.
    if (this.#sessionId === sessionId || this.#client === undefined) {
      if (this.#client !== undefined) this.#drop()
      const renewed = this.#open(undefined)
      this.#client = renewed
      renewed.catch(() => {
        if (this.#client === renewed) this.#client = undefined
      })
    }
    const client = await this.#client!
    if (!error.refused && !RETRY_SAFE.has(method)) throw error
    return client.request(method, params, options)
  }

  /**
   * The upstream refused the credential: what the provider says. A retry goes on the HTTP client as it
   * is (its next exchange asks for headers again); a WebSocket, or a link that could not open, opens anew.
   */
  #reauthorized(error: TransportError, method: string, params: JsonObject | undefined, options: RequestOptions, stored: UpstreamSession | undefined): Promise<JsonObject> {
    return afterRejection(this.#host.credentials(this.upstream), this.upstream.name, this.who, error, async () => {
      const current = this.#current
      if (current !== undefined && this.#sessionId !== undefined) return current.request(method, params, options)
      if (this.#client !== undefined) this.#drop()
      return (await this.client(stored)).request(method, params, options)
    })
  }

  /** Closes the connection; the upstream session lives on for other workers. */
  close(): void {
    this.#closed = true
    if (this.#client !== undefined) this.#drop()
  }

  /** Ends the upstream session itself (the downstream session ended): HTTP DELETE, then close. */
  async end(stored: UpstreamSession | undefined): Promise<void> {
    const id = stored?.id ?? this.#sessionId
    this.close()
    if (id === undefined || this.upstream.url === undefined || !/^https?:/.test(this.upstream.url)) return
    const credential = await Promise.resolve(this.#host.credentials(this.upstream).headers(this.who)).catch(() => undefined)
    const headers: Record<string, string> = { ...this.upstream.headers, ...credential, 'mcp-session-id': id }
    if (stored !== undefined) headers['mcp-protocol-version'] = stored.protocolVersion
    await upstreamFetch(this.upstream)(this.upstream.url, { method: 'DELETE', headers, signal: AbortSignal.timeout(5000) }).then(
      (response) => response.body?.cancel(),
      () => undefined,
    )
  }

  #drop(): void {
    const client = this.#client
    this.#client = undefined
    this.#current = undefined
    this.#sessionId = undefined
    client?.then((c) => c.close(), () => undefined).catch(() => undefined)
  }

  /** Fixed headers merged into the transport once; any other kind asked per exchange, as this link's caller. */
  #transportCredentials(): TransportCredentials {
    const provider = this.#host.credentials(this.upstream)
    if (isFixed(provider)) return { headers: provider.headers() }
    return { headers: this.upstream.headers, authorize: () => provider.headers(this.who) }
  }

  async #open(stored: UpstreamSession | undefined): Promise<McpClient> {
    const { upstream, owner } = this
    const timeoutMs = this.#host.timeoutMs(upstream)
    const clientInfo = owner.clientInfo ?? GATEWAY_CLIENT
    const key: StdioKey = upstream.url !== undefined
      ? {}
      : { session: owner.session || undefined, principal: owner.principal, initialize: stdioInitialize(owner, clientInfo) }
    const transport = connect(upstream, key, this.#host.stdio, timeoutMs, this.#transportCredentials())
    const client = new McpClient(transport, { clientInfo, timeoutMs })
    // The connection closed underneath: forget it, so the next request connects (and initializes) anew.
    const on = {
      close: () => {
        if (this.#current !== client) return
        this.#client = undefined
        this.#current = undefined
        this.#sessionId = undefined
      },
    }
    // Only an HTTP session outlives its connection; a WebSocket or a child needs its own handshake.
    if (stored?.id !== undefined && transport.resumeSession !== undefined) {
      const server: InitializeResult = { protocolVersion: stored.protocolVersion, capabilities: stored.capabilities, serverInfo: stored.serverInfo }
      await client.resume(server, stored.id, { on })
      this.#host.relay(client, this)
      this.server = server
      this.#sessionId = stored.id
      this.#current = client
      return client
    }
    // The upstream sees exactly what the downstream client declared: nothing stripped, nothing added.
    let server: InitializeResult
    try {
      server = await client.initialize({ capabilities: owner.clientCapabilities, protocolVersion: owner.protocolVersion, timeoutMs, on })
    } catch (error) {
      if (refusal(error)) initializeRefusals.add(error)
      throw error
    }
    this.#host.relay(client, this)
    this.server = server
    this.#sessionId = transport.sessionId
    this.#current = client
    const session: UpstreamSession = {
      ...(transport.sessionId === undefined ? {} : { id: transport.sessionId }),
      protocolVersion: server.protocolVersion,
      capabilities: server.capabilities,
      serverInfo: server.serverInfo,
    }
    await this.#host.save(this, session)
    await this.#host.opened(client, this)
    return client
  }
}

/** Errors with which an upstream refused this gateway's initialize (it answered, and said no). */
const initializeRefusals = new WeakSet<object>()

/** An answer that says no: a JSON-RPC error, an HTTP 4xx, a version the client cannot speak. */
function refusal(error: unknown): error is Error {
  if (error instanceof RpcError || error instanceof ProtocolError) return true
  return error instanceof TransportError && error.status !== undefined && error.status >= 400 && error.status < 500
}

/**
 * True when `error` is the upstream's refusal of an initialize (a server of 2026-07-28 only has
 * none), not a failure to reach it.
 */
export function initializeRefused(error: unknown): boolean {
  return typeof error === 'object' && error !== null && initializeRefusals.has(error)
}

/** Requests that change nothing upstream: sent once more after a lost session even if the upstream may have read them. */
const RETRY_SAFE: ReadonlySet<string> = new Set([
  'ping', 'tools/list', 'prompts/list', 'prompts/get', 'resources/list', 'resources/templates/list', 'resources/read',
  'resources/subscribe', 'resources/unsubscribe', 'completion/complete', 'logging/setLevel',
])

/**
 * True when an HTTP upstream says it does not know the session the request carried: 404 (the spec),
 * or 400 whose message names the session (the official SDK's servers after a restart).
 */
export function sessionForgotten(error: unknown): error is TransportError {
  if (!(error instanceof TransportError)) return false
  return error.status === 404 || (error.status === 400 && /session/i.test(error.message))
}

/** The downstream client's initialize as a stdio child of its own would get it (`isolation: session`). */
function stdioInitialize(owner: LinkOwner, clientInfo: Implementation): JsonObject {
  return {
    protocolVersion: owner.protocolVersion ?? CLIENT_PROTOCOL_VERSION,
    capabilities: owner.clientCapabilities as JsonObject,
    clientInfo: clientInfo as unknown as JsonObject,
  }
}
