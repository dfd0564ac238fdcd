/**
 * What a handler callback receives as `ctx`: the request's metadata, its cancellation signal, and the
 * ways back to the client (progress, logs, server→client requests). Transports implement `RequestSink`;
 * the protocol layer builds one `RequestContext` per request on top of it.
 */
import type {
  ClientCapabilities,
  CreateMessageOptions,
  CreateMessageResult,
  ElicitationSchema,
  ElicitResult,
  Implementation,
  JsonObject,
  LogLevel,
  Root,
  SamplingMessage,
} from '../wire/mcp-types.ts'
import type { Caller } from '../wire/caller.ts'

/** Options shared by every server→client request a handler makes. */
export interface ClientRequestOptions {
  /** Milliseconds to wait for the client's answer; the route's `read_timeout` by default. */
  timeoutMs?: number
  /** Called on each `notifications/progress` the client sends for this request; return `false` to cancel it. */
  onProgress?: (progress: number, total?: number, message?: string) => boolean | void
  /**
   * The key of this request in a stateless (2026-07-28) input-required result; by default the kind and
   * the call's position (`elicitation-0`, `sampling-1`, …), stable as long as the handler asks in the
   * same order on every round.
   */
  key?: string
}

export interface UrlElicitation {
  mode: 'url'
  url: string
  /** Generated when omitted; `ctx.elicitationComplete(id)` later tells the client the out-of-band step ended. */
  elicitationId?: string
}

/**
 * A component made by the `mcp` factory, as the session API takes it (components.ts imports this
 * file, so the full types cannot be named here); checked when registered, like at setup.
 */
export interface ComponentRef<K extends ComponentKind = ComponentKind> {
  readonly kind: K
}

/**
 * The session's own JSON data, kept in the store so that every worker and host reads the same (no
 * module-level map another worker cannot see). At most `limits.session_state` bytes of JSON.
 */
export interface SessionState {
  /** The data, or undefined when none was set. */
  get<T = unknown>(): Promise<T | undefined>
  /** Replaces the data; undefined (or null) clears it. */
  set(value: unknown): Promise<void>
  /**
   * Changes the data atomically (compare-and-set in the store): `change` gets the current data and
   * returns the new; it runs again if another request changed the data meanwhile, so keep it free of
   * side effects. Resolves to what was stored.
   */
  update<T = unknown>(change: (current: T | undefined) => T | undefined | Promise<T | undefined>): Promise<T | undefined>
}

/** The session a request belongs to, as a handler sees it. */
export interface SessionView {
  readonly id: string
  readonly protocolVersion: string
  readonly clientInfo: Implementation | undefined
  readonly clientCapabilities: ClientCapabilities
  /** Notify this session (if subscribed) that a resource changed. */
  resourceUpdated(uri: string): Promise<void>
  /** Enable or disable components for this session only (`kind` is tool, prompt, resource or template). */
  enable(kind: ComponentKind, name: string): Promise<void>
  disable(kind: ComponentKind, name: string): Promise<void>
  /** This session's own data (see SessionState). */
  readonly state: SessionState
  /**
   * Changes this session's catalogue only (its lists, its calls, a list_changed to it alone), on every
   * worker. A component must be one setup declared (`server.declare`/`register`: the same callback;
   * descriptions may differ), or a data resource (`mcp.resource(uri, name, text)`).
   */
  register(...components: ComponentRef[]): Promise<void>
  unregisterTool(name: string): Promise<boolean>
  unregisterPrompt(name: string): Promise<boolean>
  unregisterResource(uri: string): Promise<boolean>
  unregisterResourceTemplate(uriTemplate: string): Promise<boolean>
  replaceTools(tools: ComponentRef<'tool'>[]): Promise<void>
  replacePrompts(prompts: ComponentRef<'prompt'>[]): Promise<void>
  /** Replaces this session's static resources, and its templates too when `templates` is given. */
  replaceResources(resources: ComponentRef<'resource'>[], templates?: ComponentRef<'template'>[]): Promise<void>
  replaceResourceTemplates(templates: ComponentRef<'template'>[]): Promise<void>
  /**
   * Server→client requests outside any request (from a route event, a background task): sent on
   * the session's standalone stream (the GET stream, a WebSocket), answered to whichever worker asks.
   */
  elicit(message: string, schema: ElicitationSchema | UrlElicitation, options?: ClientRequestOptions): Promise<ElicitResult>
  createMessage(messages: SamplingMessage[], maxTokens: number, options?: CreateMessageOptions & ClientRequestOptions): Promise<CreateMessageResult>
  listRoots(options?: ClientRequestOptions): Promise<Root[]>
  ping(options?: ClientRequestOptions): Promise<void>
  /**
   * `notifications/message` on the session's standalone stream, outside any request (a background
   * task, a route event), when the session's level lets it through; always logged by the gateway.
   */
  log(level: LogLevel, data: unknown, logger?: string): Promise<void>
  /**
   * Ends the session from the server side, on whichever worker holds what of it: its streams close,
   * its requests in flight are cancelled, its next request gets 404 (the client initializes again).
   */
  shutdown(): Promise<void>
}

export type ComponentKind = 'tool' | 'prompt' | 'resource' | 'template'

/** The context of one request, passed to every tool, prompt, resource and completion callback. */
export interface RequestContext {
  /** The request's `params._meta`, as sent. */
  readonly _meta: JsonObject | undefined
  /** The JSON-RPC id of the request being served. */
  readonly requestId: string | number
  /** Fires when the client cancels the request (or goes away); the gateway then sends no response. */
  readonly signal: AbortSignal
  readonly session: SessionView
  /** Who is calling: the principal (token subject, API key owner, access module) and scopes; open routes have neither. */
  readonly caller: Caller
  /** Sends `notifications/progress` when the request carries a progressToken; `false` once it was cancelled. */
  progress(progress: number, total?: number, message?: string): boolean
  /** Sends `notifications/message` when the session's level lets it through; always logs to the gateway log. */
  log(level: LogLevel, data: unknown, logger?: string): void
  /** Asks the user through the client (form mode with a flat schema, or URL mode). */
  elicit(message: string, schema: ElicitationSchema | UrlElicitation, options?: ClientRequestOptions): Promise<ElicitResult>
  /** Tells the client that a URL-mode elicitation finished out of band. */
  elicitationComplete(elicitationId: string): void
  /** Asks the client's model for a completion (sampling). */
  createMessage(
    messages: SamplingMessage[],
    maxTokens: number,
    options?: CreateMessageOptions & ClientRequestOptions,
  ): Promise<CreateMessageResult>
  /** The client's roots. */
  listRoots(options?: ClientRequestOptions): Promise<Root[]>
  /** Pings the client. */
  ping(options?: ClientRequestOptions): Promise<void>
  /**
   * Closes the request's SSE connection without ending the request (SSE polling, SEP-1699): the client
   * reconnects after `retryMs` with Last-Event-ID and receives what followed. False when the route has
   * no resumability.
   */
  closeStream(retryMs?: number): boolean
  /**
   * Stateless requests only: what the handler kept with `setRequestState` in the previous round of
   * a multi round-trip request (undefined on the first round and in sessions).
   */
  readonly requestState: unknown
  /** Keeps JSON data for the next round of this request; it travels signed through the client. */
  setRequestState(state: unknown): void
  /** Present while the callback runs as a task (see the tool's `taskSupport`). */
  readonly task?: TaskInfo
}

/** What a callback running as a task has beyond an ordinary request's context. */
export interface TaskInfo {
  /** The task's id, as the client sees it. */
  readonly id: string
  /** What the tool's `prepare` returned, if it has one. */
  readonly prepared: unknown
  /** Sets the status message clients see on tasks/get (best effort: a store outage is logged). */
  status(message: string): Promise<void>
}
