/**
 * The tools a session loaded with load_tools, kept in the session's own catalogue document (the
 * overlay of registry/catalogue.ts) under keys `search:NAME`. The catalogue views ignore that kind
 * (no component has it) and every change of the document keeps it, so one document says what the
 * session's tools/list shows, on every worker; the record's `catalogue` version tells a worker there
 * is something to read, so a session that loaded nothing costs tools/list no store read.
 */
import type { SessionRecord, SessionStore } from '../store/store.ts'
import { EdgeError } from '../wire/errors.ts'

const PREFIX = 'search:'
const MAX_ATTEMPTS = 64

/** The names `record`'s session loaded, in the order it loaded them; none without a catalogue document. */
export async function loadedTools(store: SessionStore, record: SessionRecord): Promise<string[]> {
  if (record.catalogue === undefined || record.id === '') return []
  const doc = await store.readDoc({ session: record.id, name: 'catalogue' })
  return namesOf(doc?.value)
}

/**
 * Adds `names` to the session's loaded tools; returns the names loaded now (old and new). Throws
 * MCP_EDGE_SESSION_DATA_TOO_LARGE over `maxLoaded` tools or `maxBytes` of document.
 */
export async function loadTools(store: SessionStore, sessionId: string, names: readonly string[], maxLoaded: number, maxBytes: number): Promise<string[]> {
  const owner = { session: sessionId, name: 'catalogue' } as const
  for (let attempt = 1; ; attempt++) {
    const doc = await store.readDoc(owner)
    const value = parse(doc?.value)
    const entries = value.entries as Record<string, unknown>
    for (const name of names) entries[PREFIX + name] = 1
    const loaded = Object.keys(entries).filter((key) => key.startsWith(PREFIX))
    if (loaded.length > maxLoaded) {
      throw new EdgeError('MCP_EDGE_SESSION_DATA_TOO_LARGE', `this session would have ${loaded.length} loaded tools; it may load at most ${maxLoaded} (search.max_loaded)`)
    }
    const json = JSON.stringify(value)
    const bytes = Buffer.byteLength(json)
    if (bytes > maxBytes) throw new EdgeError('MCP_EDGE_SESSION_DATA_TOO_LARGE', `this session's catalogue would be ${bytes} bytes; a session keeps at most ${maxBytes} (limits.session_catalogue)`)
    const written = await store.writeDoc(owner, doc?.version ?? 0, json)
    if (written === 'gone') throw new EdgeError('MCP_EDGE_SESSION_NOT_FOUND')
    if (written === 'conflict') {
      if (attempt >= MAX_ATTEMPTS) throw new EdgeError('MCP_EDGE_STORE_CONFLICT')
      continue
    }
    // Every worker's record cache hears of it: their next tools/list of the session reads the document.
    if ((await store.update(sessionId, { catalogue: written.version })) === undefined) throw new EdgeError('MCP_EDGE_SESSION_NOT_FOUND')
    return loaded.map((key) => key.slice(PREFIX.length))
  }
}

function namesOf(json: string | undefined): string[] {
  const entries = parse(json).entries as Record<string, unknown>
  return Object.keys(entries).filter((key) => key.startsWith(PREFIX) && entries[key] !== 0).map((key) => key.slice(PREFIX.length))
}

/** The document as stored, every field kept (the catalogue's own entries among them); malformed counts as empty. */
function parse(json: string | undefined): Record<string, unknown> {
  if (json !== undefined) {
    try {
      const value = JSON.parse(json) as unknown
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        const doc = value as Record<string, unknown>
        if (doc.entries === null || typeof doc.entries !== 'object' || Array.isArray(doc.entries)) doc.entries = {}
        return doc
      }
    } catch {
      // as empty
    }
  }
  return { entries: {} }
}
