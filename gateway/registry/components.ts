/**
 * The components a handler registers (tools, prompts, resources, resource templates) and the `mcp`
 * factory that makes them. A component is plain data plus a callback; the registry validates and
 * indexes it, the protocol layer calls it.
 */
import type { RequestContext } from './context.ts'
import type { PromptArgs, TemplateVariables, ToolArgs, ToolReturnFor } from './declared-types.ts'
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

/** Completion callbacks by argument (or variable) name: only declared names when they are known. */
type CompletionsFor<Args> = string extends keyof Args ? Record<string, CompletionCallback> : { [Name in keyof Args]?: CompletionCallback }

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

/**
 * A tool's options. `InputSchema` and `OutputSchema` are the schemas' own types: written inline in
 * `mcp.tool(…)` (or `as const`), they type the callback's arguments and its structured result.
 */
export interface ToolOptions<InputSchema extends JsonObject = JsonObject, OutputSchema extends JsonObject | undefined = JsonObject | undefined>
  extends Described {
  /**
   * JSON Schema of the arguments (an object schema), or a TypeBox schema; `{type: 'object'}` when
   * omitted. Sent verbatim; ajv validates each call's arguments with it before the callback runs.
   */
  inputSchema?: InputSchema
  /** JSON Schema (or TypeBox schema) of `structuredContent`; an object return value is checked against it. */
  outputSchema?: OutputSchema
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
  prepare?: (args: ToolArgs<InputSchema>, ctx: RequestContext) => MaybePromise<unknown>
  /**
   * Caches the tool's successful results for `ttl_s` seconds, per arguments and principal (or for
   * every caller on a route with `result_cache: {scope: public}`); see docs/catalogues.md. Only for a
   * tool with `annotations.readOnlyHint: true`: registering another fails (and `mcp-edge check` with it).
   */
  cache?: { ttl_s: number }
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

/** A prompt's options; `Declared` is the `arguments` block's own type, which types the callback's arguments. */
export interface PromptOptions<Declared extends Record<string, PromptArgument> = Record<string, PromptArgument>> extends Described {
  arguments?: Declared
  /** Value suggestions per declared argument. */
  completions?: CompletionsFor<PromptArgs<Declared>>
}

/** A string is one user text message; an array is the messages; an object is a full `GetPromptResult`. */
export type PromptReturn = string | PromptMessage[] | GetPromptResult
export type PromptCallback = (args: Record<string, string>, ctx: RequestContext) => MaybePromise<PromptReturn>
/** A prompt callback whose arguments are typed from the `arguments` declaration. */
export type TypedPromptCallback<Declared extends Record<string, PromptArgument>> = (
  args: PromptArgs<Declared>,
  ctx: RequestContext,
) => MaybePromise<PromptReturn>

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
export type ResourceTemplateCallback<Template extends string = string> = (
  uri: string,
  variables: TemplateVariables<Template>,
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

export interface ResourceTemplateOptions<Template extends string = string> extends ResourceOptions {
  /** Value suggestions per variable of the template. */
  completions?: CompletionsFor<TemplateVariables<Template>>
}

export interface ResourceTemplate extends ResourceTemplateOptions {
  readonly kind: 'template'
  readonly uriTemplate: string
  readonly name: string
  readonly callback: ResourceTemplateCallback
}

export type Component = Tool | Prompt | Resource | ResourceTemplate

/**
 * A tool. Its `args` are typed from an inline (or `as const`) `inputSchema`, its structured result
 * from `outputSchema`; without them, or with schemas typed as plain `JsonObject`, they are JSON objects.
 */
function tool<
  // No defaults: an argument that does not infer them leaves the constraint, i.e. the untyped forms
  // (and a default would make the compiler resolve FromSchema over a generic schema).
  const InputSchema extends JsonObject,
  const OutputSchema extends JsonObject | undefined,
  const Returned extends ToolReturnFor<OutputSchema>,
>(
  name: string,
  callback: (args: ToolArgs<NoInfer<InputSchema>>, ctx: RequestContext) => MaybePromise<Returned>,
  options: ToolOptions<InputSchema, OutputSchema> = {},
): Tool {
  const { prepare, ...described } = options
  const component: Tool = { ...described, kind: 'tool', name, callback: untyped<ToolCallback>(callback) }
  if (prepare !== undefined) component.prepare = untyped<NonNullable<Tool['prepare']>>(prepare)
  return component
}

/** A prompt; its `args` are typed from the `arguments` declaration (the required ones are strings). */
function prompt<const Declared extends Record<string, PromptArgument>>(
  name: string,
  callback: (args: PromptArgs<NoInfer<Declared>>, ctx: RequestContext) => MaybePromise<PromptReturn>,
  options: PromptOptions<Declared> = {},
): Prompt {
  const { completions, ...described } = options
  const component: Prompt = { ...described, kind: 'prompt', name, callback: untyped<PromptCallback>(callback) }
  if (completions !== undefined) component.completions = completions as Record<string, CompletionCallback>
  return component
}

/** A resource read by `callback`, or (given a string) a data resource whose text is that string. */
function resource(uri: string, name: string, callback: ResourceCallback | string, options: ResourceOptions = {}): Resource {
  if (typeof callback !== 'string') return { ...options, kind: 'resource', uri, name, callback }
  const text = callback
  return { ...options, kind: 'resource', uri, name, text, callback: () => text }
}

/** A resource template; the callback's `variables` are typed from the template's expressions. */
function resourceTemplate<const Template extends string>(
  uriTemplate: Template,
  name: string,
  callback: ResourceTemplateCallback<NoInfer<Template>>,
  options: ResourceTemplateOptions<NoInfer<Template>> = {},
): ResourceTemplate {
  const { completions, ...described } = options
  const component: ResourceTemplate = { ...described, kind: 'template', uriTemplate, name, callback: untyped<ResourceTemplateCallback>(callback) }
  if (completions !== undefined) component.completions = completions as Record<string, CompletionCallback>
  return component
}

/**
 * A callback typed from its declaration, stored as the untyped form the registry calls. Sound because
 * the registry calls it only with what the declaration admits: arguments that passed the tool's
 * inputSchema validator, a prompt's required arguments present and all strings, a template's variables
 * that expand back to the URI asked for.
 */
function untyped<Untyped>(callback: (args: never, ...rest: never[]) => unknown): Untyped {
  return callback as Untyped
}

/** The factory handed to a handler module as `mcp`. */
export const mcp = { tool, prompt, resource, resourceTemplate }

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
