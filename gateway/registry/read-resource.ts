/**
 * resources/read: resolve the URI (static resource first, then templates in registration order), run
 * the callback, and turn its return value into contents that each carry a `uri` and the component's
 * `mimeType`. "Not found" (no match, or a callback returning undefined/null) is its own error,
 * -32002 with `data.uri`, distinct from a callback that throws (which propagates).
 */
import { McpError, RpcCode } from '../wire/errors.ts'
import type { RequestContext } from './context.ts'
import type { ReadResourceResult, ResourceContents } from '../wire/mcp-types.ts'
import { isRecord } from './component-checks.ts'
import type { Registry } from './registry.ts'

/** Reads a resource; throws McpError(ResourceNotFound, 'Resource not found', {uri}) when nothing serves `uri`. */
export async function readResource(
  registry: Registry,
  uri: string,
  ctx: RequestContext,
  hidden?: ReadonlySet<string>,
): Promise<ReadResourceResult> {
  if (typeof uri !== 'string') throw new McpError(RpcCode.InvalidParams, 'uri must be a string')
  const resolved = registry.resolveResource(uri, hidden)
  if (resolved === undefined) throw notFound(uri)
  let value: unknown
  let mimeType: string | undefined
  if (resolved.kind === 'resource') {
    mimeType = resolved.entry.resource.mimeType
    value = await resolved.entry.resource.callback(uri, ctx)
  } else {
    mimeType = resolved.entry.template.mimeType
    value = await resolved.entry.template.callback(uri, resolved.variables, ctx)
  }
  if (value === undefined || value === null) throw notFound(uri)
  return { contents: toContents(value, uri, mimeType) }
}

function notFound(uri: string): McpError {
  return new McpError(RpcCode.ResourceNotFound, 'Resource not found', { uri })
}

function toContents(value: unknown, uri: string, mimeType: string | undefined): ResourceContents[] {
  if (typeof value === 'string') return [withMime({ uri, text: value }, mimeType)]
  if (value instanceof Uint8Array) return [withMime({ uri, blob: base64(value) }, mimeType)]
  if (Array.isArray(value)) {
    return value.map((item: unknown, index) => {
      if (!isRecord(item) || (typeof item.text !== 'string' && typeof item.blob !== 'string')) {
        throw new Error(`Resource ${uri}: contents[${index}] needs a string "text" or a base64 "blob"`)
      }
      if (typeof item.uri === 'string' && (item.mimeType !== undefined || mimeType === undefined)) {
        return item as unknown as ResourceContents
      }
      const filled = { ...item, uri: typeof item.uri === 'string' ? item.uri : uri }
      return withMime(filled as unknown as ResourceContents, mimeType)
    })
  }
  throw new Error(`Resource ${uri} returned ${typeof value}, not a string, bytes or a list of contents`)
}

function withMime<T extends ResourceContents>(contents: T, mimeType: string | undefined): T {
  if (mimeType !== undefined && contents.mimeType === undefined) contents.mimeType = mimeType
  return contents
}

function base64(bytes: Uint8Array): string {
  // A Buffer view over the same memory: no copy before encoding.
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
}
