/**
 * One upstream session as this worker holds it: an McpClient on a transport to the upstream, for one
 * downstream session (or one stateless pool key). The session itself is data in the store, so the
 * first worker that needs it initializes it and every other one continues it without a handshake:
 *
 *   request ─► client? ──no──► stored session with an id (HTTP)? ──yes──► resume (no initialize)
 *                 │                       │ no
 *                 │                       └──► initialize (the downstream client's capabilities) ─► save
 *                 ▼
 *              client.request ─► HTTP 404 (the upstream forgot the session) ─► initialize once more, retry once
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
import { TransportError } from '../client/errors.ts'
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
    return current.request(method, params, options).catch((error: unknown) => this.#renewed(error, method, params, options))
  }

  async #requestOpening(method: string, params: JsonObject | undefined, options: RequestOptions, stored: UpstreamSession | undefined): Promise<JsonObject> {
    let client: McpClient
    try {
      client = await this.client(stored)
    } catch (error) {
      if (isRejected(error) && !this.#closed) return this.#reauthorized(error, method, params, options, stored)
      throw error
    }
    try {
      return await client.request(method, params, options)
    } catch (error) {
      return this.#renewed(error, method, params, options, stored)
    }
  }

  /**
   * After `error`: the request once more on a new session when the upstream forgot this one (404), the
   * credential's verdict when it refused it (401), else the error.
   */
  async #renewed(error: unknown, method: string, params: JsonObject | undefined, options: RequestOptions, stored?: UpstreamSession): Promise<JsonObject> {
    if (isRejected(error) && !this.#closed) return this.#reauthorized(error, method, params, options, stored)
    if (!(error instanceof TransportError) || error.status !== 404 || this.#closed) throw error
    if (this.#client !== undefined) this.#drop()
    const renewed = this.#open(undefined)
    this.#client = renewed
    return (await renewed).request(method, params, options)
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
    const server = await client.initialize({ capabilities: owner.clientCapabilities, protocolVersion: owner.protocolVersion, timeoutMs, on })
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

/** The downstream client's initialize as a stdio child of its own would get it (`isolation: session`). */
function stdioInitialize(owner: LinkOwner, clientInfo: Implementation): JsonObject {
  return {
    protocolVersion: owner.protocolVersion ?? CLIENT_PROTOCOL_VERSION,
    capabilities: owner.clientCapabilities as JsonObject,
    clientInfo: clientInfo as unknown as JsonObject,
  }
}
