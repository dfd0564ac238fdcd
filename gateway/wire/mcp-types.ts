/**
 * The MCP wire shapes that handler code produces and the gateway sends.
 * Loose where the spec is open (`_meta`, extra keys pass through), exact where the gateway relies on a field.
 */

export type JsonObject = { [key: string]: unknown }
export type Role = 'user' | 'assistant'

/** Client hints on a content block or a resource; `priority` is clipped to [0, 1] on registration. */
export interface Annotations {
  audience?: Role[]
  priority?: number
  lastModified?: string
}

/** An icon for a tool, prompt, resource or server (`src` is an https: or data: URL). */
export interface Icon {
  src: string
  mimeType?: string
  sizes?: string[]
  theme?: 'light' | 'dark'
}

export interface TextResourceContents { uri: string; mimeType?: string; text: string; _meta?: JsonObject }
export interface BlobResourceContents { uri: string; mimeType?: string; blob: string; _meta?: JsonObject }
export type ResourceContents = TextResourceContents | BlobResourceContents

export interface TextContent { type: 'text'; text: string; annotations?: Annotations; _meta?: JsonObject }
export interface ImageContent { type: 'image'; data: string; mimeType: string; annotations?: Annotations; _meta?: JsonObject }
export interface AudioContent { type: 'audio'; data: string; mimeType: string; annotations?: Annotations; _meta?: JsonObject }
export interface ResourceLink {
  type: 'resource_link'
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  size?: number
  annotations?: Annotations
  icons?: Icon[]
  _meta?: JsonObject
}
export interface EmbeddedResource { type: 'resource'; resource: ResourceContents; annotations?: Annotations; _meta?: JsonObject }
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource

export interface PromptMessage { role: Role; content: ContentBlock }

// Results are type aliases, not interfaces: to the type checker they are then JSON objects, so a
// method handler returns them as its JSON-RPC result as they are.
export type CallToolResult = {
  content: ContentBlock[]
  structuredContent?: unknown
  isError?: boolean
  _meta?: JsonObject
}

export type GetPromptResult = { description?: string; messages: PromptMessage[]; _meta?: JsonObject }

export type ReadResourceResult = { contents: ResourceContents[]; _meta?: JsonObject }

export type CompletionResult = { values: string[]; total?: number; hasMore?: boolean }

export interface Implementation {
  name: string
  version: string
  title?: string
  description?: string
  websiteUrl?: string
  icons?: Icon[]
}

export interface ClientCapabilities {
  roots?: { listChanged?: boolean }
  sampling?: { context?: JsonObject; tools?: JsonObject }
  elicitation?: { form?: JsonObject; url?: JsonObject }
  experimental?: JsonObject
  [key: string]: unknown
}

export interface ServerCapabilities {
  prompts?: { listChanged?: boolean }
  resources?: { subscribe?: boolean; listChanged?: boolean }
  tools?: { listChanged?: boolean }
  logging?: JsonObject
  completions?: JsonObject
  /** 2025-11-25 core tasks (experimental). */
  tasks?: JsonObject
  experimental?: JsonObject
}

/** The eight RFC 5424 levels, least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface Root { uri: string; name?: string; _meta?: JsonObject }

export type SamplingContent = TextContent | ImageContent | AudioContent | JsonObject
export interface SamplingMessage { role: Role; content: SamplingContent | SamplingContent[]; _meta?: JsonObject }

export interface ModelPreferences {
  hints?: { name?: string }[]
  costPriority?: number
  speedPriority?: number
  intelligencePriority?: number
}

export interface CreateMessageOptions {
  modelPreferences?: ModelPreferences
  systemPrompt?: string
  includeContext?: 'none' | 'thisServer' | 'allServers'
  temperature?: number
  stopSequences?: string[]
  metadata?: JsonObject
  tools?: JsonObject[]
  toolChoice?: { mode: 'auto' | 'required' | 'none' }
}

export interface CreateMessageResult {
  role: Role
  content: SamplingContent | SamplingContent[]
  model: string
  stopReason?: string
  _meta?: JsonObject
}

/** A flat elicitation schema: an object of primitive properties (strings, numbers, booleans, enums). */
export interface ElicitationSchema {
  type: 'object'
  properties: Record<string, JsonObject>
  required?: string[]
}

export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel'
  content?: Record<string, string | number | boolean | string[]>
  _meta?: JsonObject
}
