/**
 * The client API's own shapes: what the server's requests carry to the callbacks, the event
 * handlers, and the options of initialize. Wire shapes shared with the server side come from
 * `wire/mcp-types.ts` and `registry/descriptors.ts`.
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
  ServerCapabilities,
} from '../wire/mcp-types.ts'
import type { IncomingRequestExtra } from './protocol.ts'

export type { ToolDescriptor, PromptDescriptor, PromptArgumentDescriptor, ResourceDescriptor, ResourceTemplateDescriptor } from '../registry/descriptors.ts'
export type { RequestOptions, IncomingRequestExtra } from './protocol.ts'

/** The params of a server's `sampling/createMessage`. */
export type CreateMessageParams = CreateMessageOptions & { messages: SamplingMessage[]; maxTokens: number; _meta?: JsonObject }

/** The params of a server's `elicitation/create`: a form (the default mode) or a URL to visit. */
export type ElicitParams =
  | { mode?: 'form'; message: string; requestedSchema: ElicitationSchema; _meta?: JsonObject }
  | { mode: 'url'; message: string; url: string; elicitationId: string; _meta?: JsonObject }

/**
 * What a sampling callback may return: a full result; a string (the assistant's text); or a result
 * without `role` (then `assistant`) or `model` (then `samplingModel`, by default the clientInfo name).
 */
export type SamplingAnswer = string | (Omit<CreateMessageResult, 'role' | 'model'> & Partial<Pick<CreateMessageResult, 'role' | 'model'>>)

/** Answers the server's sampling requests; throw an McpError to answer with a JSON-RPC error. */
export type SamplingCallback = (params: CreateMessageParams, extra: IncomingRequestExtra) => SamplingAnswer | Promise<SamplingAnswer>

/**
 * What an elicitation callback may return: a full result (with `action`); the content alone (an
 * object without `action`: accepted); `true` (accepted without content, a URL visited); `false`
 * (declined); `undefined` or `null` (cancelled).
 */
export type ElicitationAnswer = ElicitResult | NonNullable<ElicitResult['content']> | boolean | undefined | null

/** Answers the server's elicitation requests; throw an McpError to answer with a JSON-RPC error. */
export type ElicitationCallback = (params: ElicitParams, extra: IncomingRequestExtra) => ElicitationAnswer | Promise<ElicitationAnswer>

/** A `notifications/message` from the server. */
export interface LogMessage { level: LogLevel; logger?: string; data: unknown }

/** Handlers for what the server sends on its own. */
export interface ClientEvents {
  toolsListChanged?: () => void
  promptsListChanged?: () => void
  resourcesListChanged?: () => void
  /** Log messages at or above the level set with `setLogLevel` (all of them until then). */
  log?: (message: LogMessage) => void
  /** A URL elicitation finished out of band. */
  elicitationComplete?: (elicitationId: string) => void
  /** Failures that end no request: a lost standalone stream, a malformed server message, a throwing handler. */
  error?: (error: Error) => void
  /** The connection is gone (closed by either side). */
  close?: () => void
}

export interface InitializeOptions {
  /** The roots to expose; declares the `roots` capability (with listChanged) and answers `roots/list`. */
  roots?: Root[]
  /** Declares the `sampling` capability and answers `sampling/createMessage`; `extra.progress` reports progress. */
  sampling?: SamplingCallback
  /** The `model` a sampling answer without one is given; default the clientInfo name. */
  samplingModel?: string
  /** Declares the `elicitation` capability and answers `elicitation/create`. */
  elicitation?: ElicitationCallback
  /** Elicitation modes the callback handles; default `['form']`. */
  elicitationModes?: ('form' | 'url')[]
  on?: ClientEvents
  /** More capabilities to declare (experimental, tasks…), merged over the ones the callbacks imply. */
  capabilities?: ClientCapabilities
  /** The version to ask for; default 2025-11-25. The server's answer must be a version this client speaks. */
  protocolVersion?: string
  /** Milliseconds to wait for the initialize result; the client's default otherwise. */
  timeoutMs?: number
}

/** The server's answer to initialize. */
export interface InitializeResult {
  protocolVersion: string
  capabilities: ServerCapabilities
  serverInfo: Implementation
  instructions?: string
  _meta?: JsonObject
}

export interface ClientOptions {
  /** Sent as `clientInfo`; default `{ name: 'mcp-edge-client', version: <package version> }`. */
  clientInfo?: Implementation
  /** Default timeout of every request, in milliseconds; default 60 000 (0: no timeout). */
  timeoutMs?: number
  /**
   * Keep what listTools, listPrompts, listResources and listResourceTemplates return until the
   * server announces that list changed (`notifications/…/list_changed`); only for lists whose
   * capability declares `listChanged`. Default false.
   */
  cacheLists?: boolean
}
