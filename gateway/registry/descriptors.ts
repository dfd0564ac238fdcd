/**
 * The wire descriptors that `tools/list`, `prompts/list`, `resources/list` and
 * `resources/templates/list` send, built once per component at registration. Keys whose value is
 * undefined are left out, so a descriptor serialises exactly as the handler author wrote it.
 */
import type { Prompt, Resource, ResourceTemplate, Tool, ToolAnnotations } from './components.ts'
import type { Annotations, Icon, JsonObject } from '../wire/mcp-types.ts'

/** A tool as `tools/list` sends it. */
export interface ToolDescriptor {
  name: string
  title?: string
  description?: string
  inputSchema: JsonObject
  outputSchema?: JsonObject
  annotations?: ToolAnnotations
  /** 2025-11-25: whether the tool runs as a task (absent: forbidden). */
  execution?: { taskSupport: 'optional' | 'required' }
  icons?: Icon[]
  _meta?: JsonObject
}

/** One argument of a prompt as `prompts/list` sends it. */
export interface PromptArgumentDescriptor {
  name: string
  title?: string
  description?: string
  required?: boolean
}

/** A prompt as `prompts/list` sends it. */
export interface PromptDescriptor {
  name: string
  title?: string
  description?: string
  arguments?: PromptArgumentDescriptor[]
  icons?: Icon[]
  _meta?: JsonObject
}

/** A static resource as `resources/list` sends it. */
export interface ResourceDescriptor {
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  annotations?: Annotations
  size?: number
  icons?: Icon[]
  _meta?: JsonObject
}

/** A resource template as `resources/templates/list` sends it. */
export interface ResourceTemplateDescriptor {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  annotations?: Annotations
  icons?: Icon[]
  _meta?: JsonObject
}

/** The input schema of a tool that declares none (MCP requires an object schema on the wire); shared and frozen. */
export const EMPTY_INPUT_SCHEMA: JsonObject = Object.freeze({ type: 'object' })

/** `tools/list` entry; `annotations` is the already-checked copy. */
export function toolDescriptor(tool: Tool, annotations: ToolAnnotations | undefined): ToolDescriptor {
  return compact({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema ?? EMPTY_INPUT_SCHEMA,
    outputSchema: tool.outputSchema,
    annotations,
    execution: tool.taskSupport === 'optional' || tool.taskSupport === 'required' ? { taskSupport: tool.taskSupport } : undefined,
    icons: tool.icons,
    _meta: tool._meta,
  })
}

/** `prompts/list` entry, arguments in declaration order. */
export function promptDescriptor(prompt: Prompt): PromptDescriptor {
  const args = prompt.arguments
  return compact({
    name: prompt.name,
    title: prompt.title,
    description: prompt.description,
    arguments:
      args === undefined
        ? undefined
        : Object.entries(args).map(([name, arg]) =>
            compact({ name, title: arg.title, description: arg.description, required: arg.required }),
          ),
    icons: prompt.icons,
    _meta: prompt._meta,
  })
}

/** `resources/list` entry; `annotations` is the copy with its priority clipped. */
export function resourceDescriptor(resource: Resource, annotations: Annotations | undefined): ResourceDescriptor {
  return compact({
    uri: resource.uri,
    name: resource.name,
    title: resource.title,
    description: resource.description,
    mimeType: resource.mimeType,
    annotations,
    size: resource.size,
    icons: resource.icons,
    _meta: resource._meta,
  })
}

/** `resources/templates/list` entry; `annotations` is the copy with its priority clipped. */
export function templateDescriptor(template: ResourceTemplate, annotations: Annotations | undefined): ResourceTemplateDescriptor {
  return compact({
    uriTemplate: template.uriTemplate,
    name: template.name,
    title: template.title,
    description: template.description,
    mimeType: template.mimeType,
    annotations,
    icons: template.icons,
    _meta: template._meta,
  })
}

// Copies the defined keys into a fresh object (rather than deleting the others), which keeps V8's fast
// object layout for the JSON.stringify of every list response.
function compact<T extends object>(value: T): T {
  const out: Record<string, unknown> = {}
  for (const key in value) {
    const field = value[key]
    if (field !== undefined) out[key] = field
  }
  return out as T
}
