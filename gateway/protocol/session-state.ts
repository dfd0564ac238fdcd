/**
 * `ctx.session.state`: one JSON document per session in the store, beside its record, so any worker
 * on any host reads and changes the same data. `update` is a compare-and-set loop, atomic on every
 * backend (on Redis one script checks the version and writes).
 */
import type { SessionState } from '../registry/context.ts'
import type { DocOwner, SessionStore } from '../store/store.ts'
import { EdgeError } from '../wire/errors.ts'
import { MAX_ATTEMPTS } from './catalogues.ts'

/** The state of session `sessionId`, at most `maxBytes` of JSON. */
export function sessionState(store: SessionStore, sessionId: string, maxBytes: number): SessionState {
  const owner: DocOwner = { session: sessionId, name: 'state' }
  const write = async <T>(change: (current: T | undefined) => T | undefined | Promise<T | undefined>): Promise<T | undefined> => {
    for (let attempt = 1; ; attempt++) {
      const doc = await store.readDoc(owner)
      const next = await change(doc === undefined ? undefined : decode<T>(doc.value))
      const json = JSON.stringify(next ?? null)
      const bytes = Buffer.byteLength(json)
      if (bytes > maxBytes) {
        throw new EdgeError('MCP_EDGE_SESSION_DATA_TOO_LARGE', `ctx.session.state would be ${bytes} bytes; a session keeps at most ${maxBytes} (limits.session_state)`)
      }
      const written = await store.writeDoc(owner, doc?.version ?? 0, json)
      if (written === 'gone') throw new EdgeError('MCP_EDGE_SESSION_NOT_FOUND')
      if (written !== 'conflict') return next ?? undefined
      if (attempt >= MAX_ATTEMPTS) throw new EdgeError('MCP_EDGE_STORE_CONFLICT')
    }
  }
  return {
    async get<T>(): Promise<T | undefined> {
      const doc = await store.readDoc(owner)
      return doc === undefined ? undefined : decode<T>(doc.value)
    },
    async set(value: unknown): Promise<void> {
      await write(() => value)
    },
    update: write,
  }
}

function decode<T>(json: string): T | undefined {
  return (JSON.parse(json) as T | null) ?? undefined
}
