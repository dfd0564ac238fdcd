/**
 * Stateless (2026-07-28) requests to an HTTP upstream that speaks that revision: the downstream's
 * request goes up as it came (its `_meta` envelope, `inputResponses`, the upstream's own signed
 * `requestState`), with the routing headers the upstream checks, and its answer comes back as it is,
 * `input_required` included. No session, no handshake, nothing kept between requests.
 *
 *   POST (Mcp-Method, Mcp-Name, Mcp-Param-*, MCP-Protocol-Version: 2026-07-28)
 *     ─► application/json: the response
 *     └► text/event-stream: progress and log notifications (to `onMessage`) … then the response
 *
 * Whether the upstream speaks 2026-07-28 is learnt once from `server/discover` and kept.
 */
import { ProtocolError, RpcError, TimeoutError, TransportError } from '../client/errors.ts'
import { readSse } from '../client/sse-parser.ts'
import type { UpstreamConfig } from '../config/types.ts'
import { maxMessageBytes, upstreamFetch } from './connect.ts'
import { afterRejection, isRejected } from './credentials/rejection.ts'
import type { CredentialProvider } from './credentials/provider.ts'
import type { Caller } from '../wire/caller.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { isSupportedVersion } from '../wire/versions.ts'
import { addTraceHeaders } from '../client/trace-headers.ts'

const VERSION = '2026-07-28'
/** Milliseconds before a failed discover is asked again. */
const REDISCOVER_MS = 30_000

export interface StatelessOptions {
  timeoutMs: number
  signal?: AbortSignal
  /** `Mcp-Param-<name>` values of the tool's `x-mcp-header` arguments. */
  paramHeaders?: Record<string, string>
  /** Notifications the upstream sends before its response. */
  onMessage?: (message: JsonRpcMessage) => void
  /** Whom the request is for: the credential provider's `who`. */
  who?: Caller | undefined
}

export class StatelessUpstream {
  readonly #upstream: UpstreamConfig
  readonly #credentials: CredentialProvider
  readonly #url: string
  readonly #maxBytes: number
  #speaks: Promise<boolean> | undefined
  /** The upstream speaks no 2025-era version: a session client's requests go up stateless too. */
  #only = false
  /** The last discover's answer: speaks 2026-07-28 or not; undefined until one came. */
  #known: boolean | undefined
  #askedAt = 0
  #seq = 0
  /**
   * The upstream refused a 2025-era initialize. Until then a session client gets a session of its
   * own era even from an upstream whose discover lists 2026-07-28 alone (the Python SDK's v2 servers
   * list only that, yet accept a 2025-11-25 initialize).
   */
  sessionsRefused = false

  constructor(upstream: UpstreamConfig, credentials: CredentialProvider) {
    this.#upstream = upstream
    this.#credentials = credentials
    this.#url = upstream.url!
    this.#maxBytes = maxMessageBytes(upstream)
  }

  /**
   * True when the upstream's discover lists 2026-07-28 (asked once; a failure is asked again later).
   * `who`: whom to ask as, for an upstream whose credential is per principal.
   */
  speaksStateless(timeoutMs: number, who?: Caller): Promise<boolean> {
    if (this.#speaks !== undefined && Date.now() - this.#askedAt < REDISCOVER_MS) return this.#speaks
    if (this.#speaks !== undefined) {
      const known = this.#speaks
      // A yes stays a yes; a no (or a failure) is asked again.
      return known.then((yes) => (yes ? true : this.#discover(timeoutMs, who)))
    }
    return this.#discover(timeoutMs, who)
  }

  #discover(timeoutMs: number, who: Caller | undefined): Promise<boolean> {
    this.#askedAt = Date.now()
    const envelope = { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } }
    const asked = this.request('server/discover', envelope, { timeoutMs, who }).then(
      (result) => {
        const versions: unknown[] = Array.isArray(result.supportedVersions) ? result.supportedVersions : []
        this.#only = versions.includes(VERSION) && !versions.some((version) => typeof version === 'string' && isSupportedVersion(version))
        return (this.#known = versions.includes(VERSION))
      },
      () => (this.#known = false),
    )
    this.#speaks = asked
    return asked
  }

  /**
   * True when the upstream's discover lists 2026-07-28 and no 2025-era version (it has no initialize).
   * A boolean once known (no promise per request on the hot path); a promise while asking.
   */
  statelessOnly(timeoutMs: number, who?: Caller): boolean | Promise<boolean> {
    if (this.#known === true) return this.#only
    if (this.#known === false && Date.now() - this.#askedAt < REDISCOVER_MS) return false
    return this.speaksStateless(timeoutMs, who).then((yes) => yes && this.#only)
  }

  /** The health probe of an upstream without sessions: a discover that must answer. */
  async probe(timeoutMs: number): Promise<void> {
    const envelope = { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': {} } }
    await this.request('server/discover', envelope, { timeoutMs })
  }

  /**
   * One stateless request; rejects with RpcError (the upstream's error), TransportError, TimeoutError,
   * ProtocolError, or the credential's errors (an upstream 401 is retried once when the provider says so).
   */
  async request(method: string, params: JsonObject, options: StatelessOptions): Promise<JsonObject> {
    try {
      return await this.#request(method, params, options)
    } catch (error) {
      if (!isRejected(error)) throw error
      return afterRejection(this.#credentials, this.#upstream.name, options.who, error, () => this.#request(method, params, options))
    }
  }

  async #request(method: string, params: JsonObject, options: StatelessOptions): Promise<JsonObject> {
    const id = `edge-${++this.#seq}`
    const credential = this.#credentials.headers(options.who, options.signal)
    const headers: Record<string, string> = {
      ...this.#upstream.headers,
      ...(credential instanceof Promise ? await credential : credential),
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': VERSION,
      'mcp-method': method,
    }
    const name = method === 'tools/call' || method === 'prompts/get' ? params.name : method === 'resources/read' ? params.uri : undefined
    if (typeof name === 'string') headers['mcp-name'] = headerValue(name)
    for (const [suffix, value] of Object.entries(options.paramHeaders ?? {})) headers[`mcp-param-${suffix}`] = headerValue(value)
    addTraceHeaders(headers, params)
    const timeout = AbortSignal.timeout(options.timeoutMs)
    const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout])
    let response: Response
    try {
      response = await upstreamFetch(this.#upstream)(this.#url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }), signal })
    } catch (error) {
      throw failure(error, timeout, options.timeoutMs)
    }
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel()
      throw new TransportError(`HTTP ${response.status}`, { status: response.status, challenge: response.headers.get('www-authenticate') ?? undefined })
    }
    try {
      const type = response.headers.get('content-type') ?? ''
      if (type.includes('text/event-stream') && response.body !== null) {
        for await (const event of readSse(response.body, this.#maxBytes)) {
          if (event.data === '') continue
          const message = JSON.parse(event.data) as JsonRpcMessage
          if ('method' in message) options.onMessage?.(message)
          else if (message.id === id) return answer(message)
        }
        throw new ProtocolError(`The stream of ${method} ended without its response`)
      }
      const text = await response.text()
      if (text.length > this.#maxBytes) throw new ProtocolError(`The answer to ${method} is larger than ${this.#maxBytes} bytes`)
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        throw new TransportError(`HTTP ${response.status}`, { status: response.status })
      }
      return answer(body as JsonRpcMessage)
    } catch (error) {
      if (error instanceof RpcError || error instanceof ProtocolError || error instanceof TransportError) throw error
      throw failure(error, timeout, options.timeoutMs)
    }
  }
}

function answer(message: JsonRpcMessage): JsonObject {
  if ('error' in message && typeof message.error === 'object' && message.error !== null) {
    throw new RpcError(message.error.code, message.error.message, message.error.data)
  }
  if ('result' in message && typeof message.result === 'object' && message.result !== null) return message.result
  throw new ProtocolError('The upstream answered with neither a result nor an error')
}

function failure(error: unknown, timeout: AbortSignal, timeoutMs: number): Error {
  if (timeout.aborted) return new TimeoutError(`no answer within ${timeoutMs} ms`, timeoutMs)
  if (error instanceof SyntaxError) return new ProtocolError('The upstream sent an event that is not JSON')
  return new TransportError('The upstream request failed', { cause: error })
}

/** A header value: plain printable ASCII as it is, anything else as `=?base64?…?=`. */
function headerValue(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`
}
