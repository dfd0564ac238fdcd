/**
 * Registration-time checks shared by every component kind. Each check throws MCP_EDGE_HANDLER_INVALID
 * with a short problem ("title must be a string"); `entries.ts` prefixes it with the component it concerns.
 * Handler modules are plain JavaScript at run time, so nothing here trusts the static types.
 */
import type { ToolAnnotations } from './components.ts'
import { EdgeError } from '../wire/errors.ts'
import type { Annotations } from '../wire/mcp-types.ts'

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/
// Whitespace and controls never belong in a URI, though `new URL` would quietly strip or encode some.
const NOT_URI_CHAR = /[\s\u0000-\u001f\u007f<>"{}|\\^`]/
const TOOL_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

/** A component the handler module registers is not valid: `problem` says what to change. */
export function invalid(problem: string, cause?: unknown): EdgeError {
  return new EdgeError('MCP_EDGE_HANDLER_INVALID', problem, { cause })
}

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Throws unless `name` is a valid tool name (1–128 of A-Z a-z 0-9 _ . -, as MCP 2025-11-25 recommends). */
export function checkToolName(name: unknown): void {
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    throw invalid('name must be 1-128 characters of A-Z, a-z, 0-9, "_", "-" and "."')
  }
}

/** Throws unless `value` is a non-empty string. */
export function checkName(value: unknown, what = 'name'): void {
  if (typeof value !== 'string' || value.length === 0) throw invalid(`${what} must be a non-empty string`)
}

/** Throws unless `uri` is an absolute URI (a scheme, then no spaces or characters URIs never contain). */
export function checkAbsoluteUri(uri: unknown): void {
  if (typeof uri !== 'string' || !SCHEME.test(uri) || NOT_URI_CHAR.test(uri) || !URL.canParse(uri)) {
    throw invalid('uri must be an absolute URI (e.g. "file:///notes.txt")')
  }
}

/** Throws unless `callback` is a function. */
export function checkCallback(callback: unknown): void {
  if (typeof callback !== 'function') throw invalid('callback must be a function')
}

/** Checks the options every component shares: title, description, icons, _meta. */
export function checkDescribed(component: Record<string, unknown>): void {
  checkOptionalString(component, 'title')
  checkOptionalString(component, 'description')
  const icons = component.icons
  if (icons !== undefined) {
    if (!Array.isArray(icons)) throw invalid('icons must be an array')
    for (const icon of icons) {
      if (!isRecord(icon) || typeof icon.src !== 'string') throw invalid('each icon needs a string "src"')
    }
  }
  if (component._meta !== undefined && !isRecord(component._meta)) throw invalid('_meta must be an object')
}

/** Checks the options resources and templates share: mimeType, size. */
export function checkResourceOptions(component: Record<string, unknown>): void {
  checkOptionalString(component, 'mimeType')
  const size = component.size
  if (size !== undefined && (typeof size !== 'number' || !Number.isInteger(size) || size < 0)) {
    throw invalid('size must be a non-negative integer')
  }
}

/** A copy of resource annotations with `priority` clipped to [0, 1]; throws on a malformed audience or priority. */
export function clipAnnotations(annotations: unknown): Annotations | undefined {
  if (annotations === undefined) return undefined
  if (!isRecord(annotations)) throw invalid('annotations must be an object')
  const { audience, priority, lastModified } = annotations
  if (audience !== undefined) {
    if (!Array.isArray(audience) || audience.some((role) => role !== 'user' && role !== 'assistant')) {
      throw invalid('annotations.audience must be a list of "user" and "assistant"')
    }
  }
  if (lastModified !== undefined && typeof lastModified !== 'string') throw invalid('annotations.lastModified must be a string')
  if (priority === undefined) return annotations as Annotations
  if (typeof priority !== 'number' || Number.isNaN(priority)) throw invalid('annotations.priority must be a number')
  return { ...annotations, priority: Math.min(1, Math.max(0, priority)) }
}

/** Checks tool annotations (booleans for the hints, a string title). */
export function checkToolAnnotations(annotations: unknown): ToolAnnotations | undefined {
  if (annotations === undefined) return undefined
  if (!isRecord(annotations)) throw invalid('annotations must be an object')
  checkOptionalString(annotations, 'title')
  for (const hint of TOOL_HINTS) {
    const value = annotations[hint]
    if (value !== undefined && typeof value !== 'boolean') throw invalid(`annotations.${hint} must be a boolean`)
  }
  return annotations as ToolAnnotations
}

/** Checks a map of completion callbacks (argument or variable name → function). */
export function checkCompletions(completions: unknown): void {
  if (completions === undefined) return
  if (!isRecord(completions)) throw invalid('completions must be an object of functions')
  for (const [name, fn] of Object.entries(completions)) {
    if (typeof fn !== 'function') throw invalid(`completions.${name} must be a function`)
  }
}

function checkOptionalString(object: Record<string, unknown>, key: string): void {
  if (object[key] !== undefined && typeof object[key] !== 'string') throw invalid(`${key} must be a string`)
}
