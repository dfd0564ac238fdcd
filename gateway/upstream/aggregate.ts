/**
 * Aggregated lists: one page from every upstream at once, each with its own deadline, merged after
 * the route's own components; a cursor that says where each source goes on.
 *
 *   cursor ─► { l: local cursor, u: { docs: "c2", ws: "x" } } ─► ask local (page l) ─┐
 *                                                                ask docs (c2)  ─────┼─► merge ─► nextCursor { l?, u: {who has more} }
 *                                                                ask ws (x)     ─────┘     └─► _meta["mcp-edge/unavailable"]: [failed]
 *
 * A cursor is opaque to the client (base64url of that JSON behind a version tag) and only valid on
 * the route that made it; a malformed one is -32602.
 */
import { TimeoutError } from '../client/errors.ts'
import { McpError, RpcCode } from '../wire/errors.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

/** The lists a proxy route aggregates, by their result key. */
export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates'

export const LIST_METHOD: Readonly<Record<ListKind, string>> = {
  tools: 'tools/list',
  prompts: 'prompts/list',
  resources: 'resources/list',
  resourceTemplates: 'resources/templates/list',
}

/** The `_meta` key naming the upstreams a list was answered without. */
export const META_UNAVAILABLE = 'mcp-edge/unavailable'

/** Where each source of an aggregated list goes on. */
export interface AggregateCursor {
  /** The local registry's cursor; absent when the local part is done. */
  l?: string
  /** Per upstream still to page through, its own cursor. */
  u: Record<string, string>
}

const TAG = 'mcpe1.'
const MAX_CURSOR_LENGTH = 8192

export function encodeCursor(cursor: AggregateCursor): string {
  return TAG + Buffer.from(JSON.stringify(cursor)).toString('base64url')
}

/** The cursor's content; throws -32602 for anything this route did not make. */
export function decodeCursor(raw: unknown, upstreams: ReadonlySet<string>): AggregateCursor {
  const invalid = new McpError(RpcCode.InvalidParams, 'Invalid cursor')
  if (typeof raw !== 'string' || !raw.startsWith(TAG) || raw.length > MAX_CURSOR_LENGTH) throw invalid
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(raw.slice(TAG.length), 'base64url').toString('utf8'))
  } catch {
    throw invalid
  }
  if (typeof parsed !== 'object' || parsed === null) throw invalid
  const { l, u } = parsed as { l?: unknown; u?: unknown }
  if (l !== undefined && typeof l !== 'string') throw invalid
  if (typeof u !== 'object' || u === null || Array.isArray(u)) throw invalid
  for (const [name, cursor] of Object.entries(u)) if (!upstreams.has(name) || typeof cursor !== 'string') throw invalid
  return { ...(l === undefined ? {} : { l }), u: u as Record<string, string> }
}

/** One upstream's page, or why it is missing. */
export type UpstreamPage =
  | { name: string; items: JsonObject[]; nextCursor: string | undefined }
  | { name: string; failure: unknown }

/**
 * Asks every named upstream for its page at once; each answer not in within its deadline counts as
 * a failure (the request itself goes on and is dropped when it ends). Never rejects.
 */
export function fanOut(
  asks: ReadonlyArray<{ name: string; deadlineMs: number; page: () => Promise<JsonObject> }>,
  key: ListKind,
): Promise<UpstreamPage[]> {
  return Promise.all(asks.map(async ({ name, deadlineMs, page }): Promise<UpstreamPage> => {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`${name} sent no ${key} within ${deadlineMs} ms`, deadlineMs)), deadlineMs)
    })
    try {
      const result = await Promise.race([page(), deadline])
      const items = result[key]
      if (!Array.isArray(items)) return { name, failure: new McpError(RpcCode.InternalError, `${name} answered without a ${key} list`) }
      const next = result.nextCursor
      return { name, items: items.filter(isObject), nextCursor: typeof next === 'string' && next !== '' ? next : undefined }
    } catch (failure) {
      return { name, failure }
    } finally {
      clearTimeout(timer)
    }
  }))
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
