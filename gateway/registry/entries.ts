/**
 * A registry entry is a checked component plus everything the hot path needs precomputed: its wire
 * descriptor, compiled validators, required argument names, parsed URI template, and the key a
 * session uses to hide it (`tool:name`, `prompt:name`, `resource:uri`, `template:uriTemplate`).
 */
import type { Component, Prompt, Resource, ResourceTemplate, Tool, ToolAnnotations } from './components.ts'
import {
  checkAbsoluteUri,
  checkCallback,
  checkCompletions,
  checkDescribed,
  checkName,
  checkResourceOptions,
  checkToolAnnotations,
  checkToolName,
  clipAnnotations,
  invalid,
  isRecord,
} from './component-checks.ts'
import {
  EMPTY_INPUT_SCHEMA,
  promptDescriptor,
  resourceDescriptor,
  templateDescriptor,
  toolDescriptor,
  type PromptDescriptor,
  type ResourceDescriptor,
  type ResourceTemplateDescriptor,
  type ToolDescriptor,
} from './descriptors.ts'
import { compileObjectSchema, type ValidateFunction } from './json-schema.ts'
import { UriTemplate } from './uri-template.ts'

/** A registered tool with its compiled argument and output validators. */
export interface ToolEntry {
  readonly key: string
  readonly tool: Tool
  readonly descriptor: ToolDescriptor
  readonly validateInput: ValidateFunction
  /** Present when the tool declares an outputSchema. */
  readonly validateOutput: ValidateFunction | undefined
}

/** A registered prompt with the names of its required arguments. */
export interface PromptEntry {
  readonly key: string
  readonly prompt: Prompt
  readonly descriptor: PromptDescriptor
  readonly required: readonly string[]
}

/** A registered static resource. */
export interface ResourceEntry {
  readonly key: string
  readonly resource: Resource
  readonly descriptor: ResourceDescriptor
}

/** A registered resource template with its parsed URI template. */
export interface TemplateEntry {
  readonly key: string
  readonly template: ResourceTemplate
  readonly descriptor: ResourceTemplateDescriptor
  readonly matcher: UriTemplate
}

/** Any registry entry. */
export type Entry = ToolEntry | PromptEntry | ResourceEntry | TemplateEntry

/** Checks a component and builds its entry; throws an Error whose message names the component. */
export function toEntry(component: Component): Entry {
  if (!isRecord(component)) throw invalid('Invalid component: expected an object made by mcp.tool/prompt/resource/resourceTemplate')
  const kind = (component as { kind?: unknown }).kind
  try {
    switch (component.kind) {
      case 'tool':
        return toolEntry(component)
      case 'prompt':
        return promptEntry(component)
      case 'resource':
        return resourceEntry(component)
      case 'template':
        return templateEntry(component)
    }
  } catch (err) {
    throw invalid(`Invalid ${label(component)}: ${err instanceof Error ? err.message : String(err)}`, err)
  }
  throw invalid(`Invalid component: unknown kind ${JSON.stringify(kind)}`)
}

function toolEntry(tool: Tool): ToolEntry {
  checkToolName(tool.name)
  checkCallback(tool.callback)
  checkDescribed(tool as unknown as Record<string, unknown>)
  const annotations = checkToolAnnotations(tool.annotations)
  if (tool.taskSupport !== undefined && !['forbidden', 'optional', 'required'].includes(tool.taskSupport)) {
    throw invalid('taskSupport must be "forbidden", "optional" or "required"')
  }
  if (tool.prepare !== undefined && typeof tool.prepare !== 'function') throw invalid('prepare must be a function')
  checkToolCache(tool.cache, annotations)
  const validateInput = compileSchema(tool.inputSchema ?? EMPTY_INPUT_SCHEMA, 'inputSchema')
  const validateOutput = tool.outputSchema === undefined ? undefined : compileSchema(tool.outputSchema, 'outputSchema')
  return { key: `tool:${tool.name}`, tool, descriptor: toolDescriptor(tool, annotations), validateInput, validateOutput }
}

function promptEntry(prompt: Prompt): PromptEntry {
  checkName(prompt.name)
  checkCallback(prompt.callback)
  checkDescribed(prompt as unknown as Record<string, unknown>)
  checkCompletions(prompt.completions)
  const required: string[] = []
  if (prompt.arguments !== undefined) {
    if (!isRecord(prompt.arguments)) throw invalid('arguments must be an object of {title, description, required}')
    for (const [name, arg] of Object.entries(prompt.arguments)) {
      if (!isRecord(arg)) throw invalid(`arguments.${name} must be an object`)
      checkDescribed(arg)
      if (arg.required !== undefined && typeof arg.required !== 'boolean') throw invalid(`arguments.${name}.required must be a boolean`)
      if (arg.required === true) required.push(name)
    }
  }
  return { key: `prompt:${prompt.name}`, prompt, descriptor: promptDescriptor(prompt), required }
}

function resourceEntry(resource: Resource): ResourceEntry {
  checkAbsoluteUri(resource.uri)
  checkName(resource.name)
  checkCallback(resource.callback)
  checkDescribed(resource as unknown as Record<string, unknown>)
  checkResourceOptions(resource as unknown as Record<string, unknown>)
  const annotations = clipAnnotations(resource.annotations)
  return { key: `resource:${resource.uri}`, resource, descriptor: resourceDescriptor(resource, annotations) }
}

function templateEntry(template: ResourceTemplate): TemplateEntry {
  if (typeof template.uriTemplate !== 'string') throw invalid('uriTemplate must be a string')
  const matcher = new UriTemplate(template.uriTemplate)
  checkName(template.name)
  checkCallback(template.callback)
  checkDescribed(template as unknown as Record<string, unknown>)
  checkResourceOptions(template as unknown as Record<string, unknown>)
  checkCompletions(template.completions)
  const annotations = clipAnnotations(template.annotations)
  return { key: `template:${template.uriTemplate}`, template, descriptor: templateDescriptor(template, annotations), matcher }
}

function compileSchema(schema: unknown, field: string): ValidateFunction {
  try {
    return compileObjectSchema(schema)
  } catch (err) {
    throw invalid(`${field} ${err instanceof Error ? err.message : String(err)}`)
  }
}

function label(component: Component): string {
  switch (component.kind) {
    case 'tool':
    case 'prompt':
      return `${component.kind} ${JSON.stringify(component.name)}`
    case 'resource':
      return `resource ${JSON.stringify(component.uri)}`
    case 'template':
      return `resource template ${JSON.stringify(component.uriTemplate)}`
  }
}

/** `cache: {ttl_s}` is for read-only tools only: a cached result of a tool that changes things would skip the change. */
function checkToolCache(cache: unknown, annotations: ToolAnnotations | undefined): void {
  if (cache === undefined) return
  if (!isRecord(cache) || typeof cache.ttl_s !== 'number' || !(cache.ttl_s > 0) || !Number.isFinite(cache.ttl_s)) throw invalid('cache must be {ttl_s: seconds > 0}')
  if (annotations?.readOnlyHint !== true) throw invalid('cache needs annotations.readOnlyHint: true (only a read-only tool\'s result may be cached)')
}
