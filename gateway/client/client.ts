/**
 * The MCP client: lua-resty-mcp's client API in TypeScript idiom, over any `Transport`.
 *
 *   const client = new McpClient(new StreamableHttpTransport({ url }))
 *   await client.initialize({ roots, sampling, elicitation, on: { toolsListChanged, log } })
 *   const tools = await client.listTools()                 // follows nextCursor to the end
 *   await client.callTool('slow', {}, { onProgress: (p) => p < 3 })  // returning false cancels
 *   await client.close()
 *
 * Failures are typed (errors.ts): RpcError (the server said no), TransportError, TimeoutError,
 * CancelledError, ProtocolError.
 */
import { McpError, RpcCode } from '../wire/errors.ts'
import type {
  CallToolResult,
  ClientCapabilities,
  CompletionResult,
  GetPromptResult,
  Implementation,
  JsonObject,
  LogLevel,
  ReadResourceResult,
  Root,
  ServerCapabilities,
} from '../wire/mcp-types.ts'
import { LATEST_STATEFUL_VERSION, isSupportedVersion } from '../wire/versions.ts'
import { ProtocolError } from './errors.ts'
import { Protocol, type NotificationHandler, type RequestHandler, type RequestOptions } from './protocol.ts'
import { checkElicitationAnswer, checkElicitationRequest, checkSamplingRequest } from './server-requests.ts'
import type { Transport } from './transport.ts'
import type {
  ClientEvents,
  ClientOptions,
  ElicitationAnswer,
  InitializeOptions,
  InitializeResult,
  LogMessage,
  PromptDescriptor,
  ResourceDescriptor,
  ResourceTemplateDescriptor,
  SamplingAnswer,
  ToolDescriptor,
} from './types.ts'

/** The protocol version initialize asks for. */
export const CLIENT_PROTOCOL_VERSION = LATEST_STATEFUL_VERSION

const DEFAULT_CLIENT_INFO: Implementation = { name: 'mcp-edge-client', version: '0.1.0' }

export class McpClient {
  readonly transport: Transport
  readonly #protocol: Protocol
  readonly #clientInfo: Implementation
  #server: InitializeResult | undefined
  #roots: Root[] | undefined
  #events: ClientEvents = {}
  readonly #subscriptions = new Map<string, (uri: string) => void>()
  /** Lists kept until their list_changed (`cacheLists`), by method. */
  readonly #lists: Map<string, unknown[]> | undefined

  constructor(transport: Transport, options: ClientOptions = {}) {
    this.transport = transport
    this.#clientInfo = options.clientInfo ?? DEFAULT_CLIENT_INFO
    this.#protocol = new Protocol(transport, options.timeoutMs ?? 60_000)
    if (options.cacheLists === true) this.#lists = new Map()
    this.#protocol.onerror = (error) => this.#events.error?.(error)
    this.#protocol.onclose = () => this.#events.close?.()
  }

  /** What the server answered to initialize, once initialized. */
  get server(): InitializeResult | undefined {
    return this.#server
  }

  get serverInfo(): Implementation | undefined {
    return this.#server?.serverInfo
  }

  get serverCapabilities(): ServerCapabilities | undefined {
    return this.#server?.capabilities
  }

  get protocolVersion(): string | undefined {
    return this.#server?.protocolVersion
  }

  /**
   * Starts the transport, negotiates the protocol version (2025-11-25 unless asked otherwise),
   * declares the capabilities the callbacks imply and sends `notifications/initialized`. On failure
   * the transport is closed and the error rethrown.
   */
  async initialize(options: InitializeOptions = {}): Promise<InitializeResult> {
    if (this.#server !== undefined) throw new Error('McpClient: already initialized')
    this.#events = options.on ?? {}
    if (options.roots !== undefined) this.#roots = [...options.roots]
    this.#installHandlers(options)
    try {
      await this.transport.start()
      const requested = options.protocolVersion ?? CLIENT_PROTOCOL_VERSION
      const params = { protocolVersion: requested, capabilities: this.#capabilities(options), clientInfo: this.#clientInfo } as unknown as JsonObject
      const result = (await this.#protocol.request('initialize', params, { timeoutMs: options.timeoutMs })) as unknown as InitializeResult
      if (typeof result.protocolVersion !== 'string' || !isSupportedVersion(result.protocolVersion)) {
        throw new ProtocolError(`The server chose protocol version ${String(result.protocolVersion)}, which this client does not speak`)
      }
      this.transport.setProtocolVersion?.(result.protocolVersion)
      await this.#protocol.notify('notifications/initialized')
      this.#server = result
      return result
    } catch (error) {
      await this.#protocol.close().catch(() => undefined)
      throw error
    }
  }

  /**
   * Continues a session initialized earlier, maybe by another process (a gateway keeps its upstream
   * sessions as data): no handshake, `server` is what that initialize answered and `sessionId` the
   * session the transport carries. Installs the same handlers initialize would.
   */
  async resume(server: InitializeResult, sessionId: string | undefined, options: InitializeOptions = {}): Promise<void> {
    if (this.#server !== undefined) throw new Error('McpClient: already initialized')
    if (!isSupportedVersion(server.protocolVersion)) throw new ProtocolError(`Cannot resume a session of protocol version ${server.protocolVersion}`)
    this.#events = options.on ?? {}
    if (options.roots !== undefined) this.#roots = [...options.roots]
    this.#installHandlers(options)
    try {
      await this.transport.start()
      this.transport.setProtocolVersion?.(server.protocolVersion)
      this.#server = server
      await this.transport.resumeSession?.(sessionId)
    } catch (error) {
      await this.#protocol.close().catch(() => undefined)
      throw error
    }
  }

  /**
   * Sends any request and resolves with its raw result: what a proxy uses for methods it forwards
   * without interpreting them. Rejects like the typed methods.
   */
  request(method: string, params?: JsonObject, options?: RequestOptions): Promise<JsonObject> {
    return this.#request(method, params, options)
  }

  /** Sends any notification (a proxy forwards the client's own). */
  notify(method: string, params?: JsonObject): Promise<void> {
    return this.#protocol.notify(method, params)
  }

  /**
   * Answers the server's `method` requests with `handler` (replacing the built-in roots, sampling or
   * elicitation handler); `extra.related` is the `context` of the request whose stream carried it.
   */
  onRequest(method: string, handler: RequestHandler): void {
    this.#protocol.setRequestHandler(method, handler)
  }

  /** Runs `handler` on each of the server's `method` notifications (replacing the built-in one). */
  onNotification(method: string, handler: NotificationHandler): void {
    this.#protocol.setNotificationHandler(method, handler)
  }

  /** Replaces the exposed roots and tells the server (`notifications/roots/list_changed`). */
  async exposeRoots(roots: Root[]): Promise<void> {
    if (this.#server !== undefined && this.#roots === undefined) {
      throw new Error('McpClient: pass `roots` to initialize() to declare the roots capability')
    }
    this.#roots = [...roots]
    if (this.#server !== undefined) await this.#protocol.notify('notifications/roots/list_changed')
  }

  listPrompts(options?: RequestOptions): Promise<PromptDescriptor[]> {
    return this.#list('prompts/list', 'prompts', options)
  }

  async getPrompt(name: string, args?: Record<string, string>, options?: RequestOptions): Promise<GetPromptResult> {
    return (await this.#request('prompts/get', args === undefined ? { name } : { name, arguments: args }, options)) as unknown as GetPromptResult
  }

  listResources(options?: RequestOptions): Promise<ResourceDescriptor[]> {
    return this.#list('resources/list', 'resources', options)
  }

  listResourceTemplates(options?: RequestOptions): Promise<ResourceTemplateDescriptor[]> {
    return this.#list('resources/templates/list', 'resourceTemplates', options)
  }

  async readResource(uri: string, options?: RequestOptions): Promise<ReadResourceResult> {
    return (await this.#request('resources/read', { uri }, options)) as unknown as ReadResourceResult
  }

  /** Subscribes to a resource; `onUpdated` runs on each `notifications/resources/updated` for it. */
  async subscribeResource(uri: string, onUpdated: (uri: string) => void, options?: RequestOptions): Promise<void> {
    const previous = this.#subscriptions.get(uri)
    this.#subscriptions.set(uri, onUpdated)
    try {
      await this.#request('resources/subscribe', { uri }, options)
    } catch (error) {
      if (previous === undefined) this.#subscriptions.delete(uri)
      else this.#subscriptions.set(uri, previous)
      throw error
    }
  }

  async unsubscribeResource(uri: string, options?: RequestOptions): Promise<void> {
    this.#subscriptions.delete(uri)
    await this.#request('resources/unsubscribe', { uri }, options)
  }

  listTools(options?: RequestOptions): Promise<ToolDescriptor[]> {
    return this.#list('tools/list', 'tools', options)
  }

  /** Calls a tool. A tool that fails answers `isError: true`, which is a result, not a thrown error. */
  async callTool(name: string, args?: JsonObject, options?: RequestOptions): Promise<CallToolResult> {
    return (await this.#request('tools/call', args === undefined ? { name } : { name, arguments: args }, options)) as unknown as CallToolResult
  }

  /** Completes a prompt argument; `previous` are the arguments already filled in. */
  completePrompt(name: string, argument: string, value: string, previous?: Record<string, string>, options?: RequestOptions): Promise<CompletionResult> {
    return this.#complete({ type: 'ref/prompt', name }, argument, value, previous, options)
  }

  /** Completes a variable of a resource template. */
  completeResource(uriTemplate: string, argument: string, value: string, previous?: Record<string, string>, options?: RequestOptions): Promise<CompletionResult> {
    return this.#complete({ type: 'ref/resource', uri: uriTemplate }, argument, value, previous, options)
  }

  async setLogLevel(level: LogLevel, options?: RequestOptions): Promise<void> {
    await this.#request('logging/setLevel', { level }, options)
  }

  async ping(options?: RequestOptions): Promise<void> {
    await this.#request('ping', undefined, options)
  }

  /**
   * Waits for what the client runs on its own: its answers to the server's requests (sampling,
   * elicitation, roots callbacks) and event handlers that return a promise. `true` once all settled,
   * `false` when `timeoutMs` passed first (0 or none: no timeout).
   */
  waitBackgroundTasks(timeoutMs?: number): Promise<boolean> {
    return this.#protocol.settled(timeoutMs)
  }

  /** Ends the session and the connection; pending requests reject with TransportError. */
  close(): Promise<void> {
    this.#subscriptions.clear()
    this.#lists?.clear()
    return this.#protocol.close()
  }

  #request(method: string, params: JsonObject | undefined, options: RequestOptions | undefined): Promise<JsonObject> {
    if (this.#server === undefined && !this.#protocol.closed) return Promise.reject(new Error(`McpClient: call initialize() before ${method}`))
    return this.#protocol.request(method, params, options)
  }

  async #list<T>(method: string, key: string, options: RequestOptions | undefined): Promise<T[]> {
    const cache = this.#cacheFor(method)
    const cached = cache?.get(method)
    if (cached !== undefined) return [...cached] as T[]
    const items = await this.#fetchList<T>(method, key, options)
    cache?.set(method, items)
    return [...items]
  }

  /** The list cache when `method`'s list may be kept: caching is on and the server announces its changes. */
  #cacheFor(method: string): Map<string, unknown[]> | undefined {
    if (this.#lists === undefined) return undefined
    const capabilities = this.#server?.capabilities as Record<string, { listChanged?: boolean } | undefined> | undefined
    const capability = method.startsWith('resources/') ? 'resources' : method.slice(0, method.indexOf('/'))
    return capabilities?.[capability]?.listChanged === true ? this.#lists : undefined
  }

  async #fetchList<T>(method: string, key: string, options: RequestOptions | undefined): Promise<T[]> {
    const items: T[] = []
    const seen = new Set<string>()
    let cursor: string | undefined
    do {
      const result = await this.#request(method, cursor === undefined ? undefined : { cursor }, options)
      const page = result[key]
      if (!Array.isArray(page)) throw new ProtocolError(`The ${method} result has no "${key}" array`)
      items.push(...(page as T[]))
      cursor = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined
      if (cursor !== undefined && seen.has(cursor)) throw new ProtocolError(`${method} sent the cursor ${cursor} twice; stopping`)
      if (cursor !== undefined) seen.add(cursor)
    } while (cursor !== undefined)
    return items
  }

  async #complete(ref: JsonObject, name: string, value: string, previous: Record<string, string> | undefined, options?: RequestOptions): Promise<CompletionResult> {
    const params: JsonObject = { ref, argument: { name, value } }
    if (previous !== undefined) params.context = { arguments: previous }
    const result = await this.#request('completion/complete', params, options)
    return result.completion as CompletionResult
  }

  #capabilities(options: InitializeOptions): ClientCapabilities {
    const capabilities: ClientCapabilities = {}
    if (this.#roots !== undefined) capabilities.roots = { listChanged: true }
    if (options.sampling !== undefined) capabilities.sampling = {}
    if (options.elicitation !== undefined) {
      const modes = options.elicitationModes ?? ['form']
      capabilities.elicitation = Object.fromEntries(modes.map((mode) => [mode, {}]))
    }
    return { ...capabilities, ...options.capabilities }
  }

  #installHandlers(options: InitializeOptions): void {
    const protocol = this.#protocol
    const events = (): ClientEvents => this.#events
    protocol.setRequestHandler('ping', () => ({}))
    protocol.setRequestHandler('roots/list', () => {
      if (this.#roots === undefined) throw new McpError(RpcCode.MethodNotFound, 'This client exposes no roots')
      return { roots: this.#roots } as unknown as JsonObject
    })
    const { sampling, elicitation } = options
    if (sampling !== undefined) {
      const model = options.samplingModel ?? this.#clientInfo.name
      protocol.setRequestHandler('sampling/createMessage', async (params, extra) =>
        samplingResult(await sampling(checkSamplingRequest(params), extra), model))
    }
    if (elicitation !== undefined) {
      const modes = new Set(options.elicitationModes ?? ['form'])
      protocol.setRequestHandler('elicitation/create', async (params, extra) => {
        const { request, validate } = checkElicitationRequest(params)
        const mode = request.mode ?? 'form'
        if (!modes.has(mode)) throw new McpError(RpcCode.InvalidParams, `This client does not support ${mode} elicitation`)
        return checkElicitationAnswer(elicitResult(await elicitation(request, extra)), validate)
      })
    }
    protocol.setNotificationHandler('notifications/tools/list_changed', () => {
      this.#lists?.delete('tools/list')
      return events().toolsListChanged?.()
    })
    protocol.setNotificationHandler('notifications/prompts/list_changed', () => {
      this.#lists?.delete('prompts/list')
      return events().promptsListChanged?.()
    })
    protocol.setNotificationHandler('notifications/resources/list_changed', () => {
      this.#lists?.delete('resources/list')
      this.#lists?.delete('resources/templates/list')
      return events().resourcesListChanged?.()
    })
    protocol.setNotificationHandler('notifications/message', (params) => events().log?.(params as unknown as LogMessage))
    protocol.setNotificationHandler('notifications/elicitation/complete', (params) => events().elicitationComplete?.(String(params.elicitationId)))
    protocol.setNotificationHandler('notifications/resources/updated', (params) => {
      const uri = String(params.uri)
      this.#subscriptions.get(uri)?.(uri)
    })
  }
}

/** A sampling callback's answer as a full result: a string is the assistant's text; role and model filled in. */
function samplingResult(answer: SamplingAnswer, model: string): JsonObject {
  if (typeof answer === 'string') return { role: 'assistant', model, content: { type: 'text', text: answer }, stopReason: 'endTurn' }
  return { ...answer, role: answer.role ?? 'assistant', model: answer.model ?? model } as unknown as JsonObject
}

/** An elicitation callback's answer as a full result (see `ElicitationAnswer`). */
function elicitResult(answer: ElicitationAnswer): JsonObject {
  if (answer === undefined || answer === null) return { action: 'cancel' }
  if (answer === true) return { action: 'accept' }
  if (answer === false) return { action: 'decline' }
  if (typeof (answer as { action?: unknown }).action === 'string') return answer as unknown as JsonObject
  return { action: 'accept', content: answer as JsonObject }
}
