/**
 * The components a handler registers (tools, prompts, resources, resource templates) and the `mcp`
 * factory that makes them. A component is plain data plus a callback; the registry validates and
 * indexes it, the protocol layer calls it.
 */
import type { RequestContext } from './context.ts'
import type {
  Annotations,
  CallToolResult,
  CompletionResult,
  ContentBlock,
  GetPromptResult,
  Icon,
  JsonObject,
  PromptMessage,
  ResourceContents,
} from '../wire/mcp-types.ts'

type MaybePromise<T> = T | Promise<T>

/** Suggests values for a prompt argument or template variable; `context` holds the other arguments already given. */
export type CompletionCallback = (
  value: string,
  context: Record<string, string>,
  ctx: RequestContext,
) => MaybePromise<string[] | CompletionResult>

interface Described {
  title?: string
  description?: string
  icons?: Icon[]
  _meta?: JsonObject
}

// ---- tools -------------------------------------------------------------------------------------

export interface ToolAnnotations {
  title?: string
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

export interface ToolOptions extends Described {
  /** JSON Schema of the arguments (an object schema); `{type: 'object'}` when omitted. Sent verbatim. */
  inputSchema?: JsonObject
  /** JSON Schema of `structuredContent`; an object return value is checked against it. */
  outputSchema?: JsonObject
  annotations?: ToolAnnotations
  /**
   * Whether a call may run as a task (on a route with `tasks.enabled`): `forbidden` (the default)
   * never, `optional` when the client asks for one, `required` always (a client that cannot take
   * tasks gets -32021). Sent as `execution.taskSupport` in tools/list.
   */
  taskSupport?: TaskSupport
  /**
   * Runs in the request, before a task is made, when the call becomes a task: ask for input here
   * (`ctx.elicit` works in both eras: 2026-07-28 clients answer it in the same call's rounds). What it
   * returns reaches the callback as `ctx.task.prepared`.
   */
  prepare?: (args: JsonObject, ctx: RequestContext) => MaybePromise<unknown>
}

/** How a tool takes tasks (2025-11-25 `execution.taskSupport`). */
export type TaskSupport = 'forbidden' | 'optional' | 'required'

/**
 * What a tool callback may return: a string (one text block), content blocks, a full `CallToolResult`
 * (an object with a `content` array), or any other object, sent as `structuredContent` plus its JSON text.
 * Throwing (or returning `{isError: true, …}`) makes an `isError` result.
 */
export type ToolReturn = string | ContentBlock[] | CallToolResult | JsonObject
export type ToolCallback = (args: JsonObject, ctx: RequestContext) => MaybePromise<ToolReturn>

export interface Tool extends ToolOptions {
  readonly kind: 'tool'
  readonly name: string
  readonly callback: ToolCallback
}

// ---- prompts -----------------------------------------------------------------------------------

export interface PromptArgument {
  title?: string
  description?: string
  required?: boolean
}

export interface PromptOptions extends Described {
  arguments?: Record<string, PromptArgument>
  completions?: Record<string, CompletionCallback>
}

/** A string is one user text message; an array is the messages; an object is a full `GetPromptResult`. */
export type PromptReturn = string | PromptMessage[] | GetPromptResult
export type PromptCallback = (args: Record<string, string>, ctx: RequestContext) => MaybePromise<PromptReturn>

export interface Prompt extends PromptOptions {
  readonly kind: 'prompt'
  readonly name: string
  readonly callback: PromptCallback
}

// ---- resources ---------------------------------------------------------------------------------

export interface ResourceOptions extends Described {
  mimeType?: string
  annotations?: Annotations
  size?: number
  /** Caching hints for 2026-07-28 reads of this resource; the route's `cache` by default. */
  cache?: { ttlMs?: number; scope?: 'public' | 'private' }
}

/**
 * A string is one text content, bytes are one blob, an array is the contents (uri and mimeType filled
 * in when missing). `undefined` or `null` from a template callback means "not found" (-32002).
 */
export type ResourceReturn = string | Uint8Array | Array<Partial<ResourceContents> & ({ text: string } | { blob: string })> | undefined | null
export type ResourceCallback = (uri: string, ctx: RequestContext) => MaybePromise<ResourceReturn>
export type ResourceTemplateCallback = (
  uri: string,
  variables: Record<string, string | string[]>,
  ctx: RequestContext,
) => MaybePromise<ResourceReturn>

export interface Resource extends ResourceOptions {
  readonly kind: 'resource'
  readonly uri: string
  readonly name: string
  readonly callback: ResourceCallback
  /**
   * Set when the resource was made from a string: its text is data, not code, so it can be
   * registered or replaced at run time (route-wide or per session) and every worker serves it.
   */
  readonly text?: string
}

export interface ResourceTemplateOptions extends ResourceOptions {
  completions?: Record<string, CompletionCallback>
}

export interface ResourceTemplate extends ResourceTemplateOptions {
  readonly kind: 'template'
  readonly uriTemplate: string
  readonly name: string
  readonly callback: ResourceTemplateCallback
}

export type Component = Tool | Prompt | Resource | ResourceTemplate

/** The factory handed to a handler module as `mcp`. */
export const mcp = {
  tool(name: string, callback: ToolCallback, options: ToolOptions = {}): Tool {
    return { ...options, kind: 'tool', name, callback }
  },
  prompt(name: string, callback: PromptCallback, options: PromptOptions = {}): Prompt {
    return { ...options, kind: 'prompt', name, callback }
  },
  /** A resource read by `callback`, or (given a string) a data resource whose text is that string. */
  resource(uri: string, name: string, callback: ResourceCallback | string, options: ResourceOptions = {}): Resource {
    if (typeof callback !== 'string') return { ...options, kind: 'resource', uri, name, callback }
    const text = callback
    return { ...options, kind: 'resource', uri, name, text, callback: () => text }
  },
  resourceTemplate(
    uriTemplate: string,
    name: string,
    callback: ResourceTemplateCallback,
    options: ResourceTemplateOptions = {},
  ): ResourceTemplate {
    return { ...options, kind: 'template', uriTemplate, name, callback }
  },
}

export type ComponentFactory = typeof mcp

/** Thrown by a tool to return an `isError` result with chosen content (a plain Error gives its message as text). */
export class ToolError extends Error {
  readonly content: ContentBlock[] | undefined
  readonly structuredContent: unknown
  constructor(message: string, detail: { content?: ContentBlock[]; structuredContent?: unknown } = {}) {
    super(message)
    this.name = 'ToolError'
    this.content = detail.content
    this.structuredContent = detail.structuredContent
  }
}
