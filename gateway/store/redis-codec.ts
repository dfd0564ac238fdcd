/**
 * The compact Redis encoding of a session record and of an event log entry. A record is one short
 * string: the part the scripts change, as a JSON array they can rewrite, a newline, then the JSON of
 * what never changes, which the scripts carry along untouched:
 *
 *   [version,lastSeq,idleTtlMs,"route",initialized,"level"|null,[subscriptions],[hidden](,{upstream:"<json>"})]
 *   [protocolVersion,clientInfo|null,clientCapabilities,principal|null,createdAt]
 *
 * The ninth item, present only on a proxy route's sessions that opened an upstream session, maps
 * upstream names to their session as a JSON string, which the scripts carry without reading. The
 * tenth, present once the session has its own catalogue, is that document's version (the ninth is
 * then at least `{}`).
 */
import type { LogLevel } from '../wire/mcp-types.ts'
import type { SessionChange, SessionRecord, StoredEvent, UpstreamSession } from './store.ts'
import { eventId } from './store.ts'

type Mutable = [number, number, number, string, 0 | 1, LogLevel | null, string[] | object, string[] | object, Record<string, string>?, number?]
type Fixed = [string, SessionRecord['clientInfo'] | null, SessionRecord['clientCapabilities'], string | null, number]

/** The string `create` stores for a new record. */
export function encodeRecord(record: SessionRecord, idleTtlMs: number): string {
  const mutable: Mutable = [0, 0, idleTtlMs, record.route, record.initialized ? 1 : 0, record.logLevel ?? null, record.subscriptions, record.hidden]
  if (record.upstreams !== undefined) {
    mutable.push(Object.fromEntries(Object.entries(record.upstreams).map(([name, session]) => [name, JSON.stringify(session)])))
  }
  const fixed: Fixed = [record.protocolVersion, record.clientInfo ?? null, record.clientCapabilities, record.principal ?? null, record.createdAt]
  return `${JSON.stringify(mutable)}\n${JSON.stringify(fixed)}`
}

/** The record, its version and idle TTL from the stored string. */
export function decodeRecord(id: string, raw: string): { record: SessionRecord; version: number; idleTtlMs: number } {
  const newline = raw.indexOf('\n')
  const [version, , idleTtlMs, route, initialized, logLevel, subscriptions, hidden, upstreams, catalogue] = JSON.parse(raw.slice(0, newline)) as Mutable
  const [protocolVersion, clientInfo, clientCapabilities, principal, createdAt] = JSON.parse(raw.slice(newline + 1)) as Fixed
  const record: SessionRecord = {
      id,
      route,
      protocolVersion,
      clientInfo: clientInfo ?? undefined,
      clientCapabilities,
      principal: principal ?? undefined,
      createdAt,
      initialized: initialized === 1,
      logLevel: logLevel ?? undefined,
      // Lua's cjson writes an empty table as {}; the scripts avoid it, this guards the rest.
      subscriptions: Array.isArray(subscriptions) ? subscriptions : [],
      hidden: Array.isArray(hidden) ? hidden : [],
  }
  if (upstreams !== undefined && Object.keys(upstreams).length > 0) {
    record.upstreams = Object.fromEntries(Object.entries(upstreams).map(([name, json]) => [name, JSON.parse(json) as UpstreamSession]))
  }
  if (typeof catalogue === 'number') record.catalogue = catalogue
  return { record, version, idleTtlMs }
}

/** A change as the update script's kind, value and max arguments (max -1: no bound). */
export function encodeChange(change: SessionChange): [string, string, number] {
  if ('initialized' in change) return ['i', '', -1]
  if ('logLevel' in change) return ['l', change.logLevel, -1]
  if ('subscribe' in change) return ['+s', change.subscribe, change.max ?? -1]
  if ('unsubscribe' in change) return ['-s', change.unsubscribe, -1]
  if ('hide' in change) return ['+h', change.hide, change.max ?? -1]
  if ('catalogue' in change) return ['c', String(change.catalogue), -1]
  if ('upstream' in change) return ['u', `${change.upstream}\n${change.session === null ? '' : JSON.stringify(change.session)}`, -1]
  return ['-h', change.show, -1]
}

/** One event log entry: `<seq> <ms> <stream> <data>` (stream ids hold no spaces). */
export interface LogEntry extends StoredEvent {
  readonly seq: number
  readonly at: number
  readonly stream: string
}

export function decodeLogEntry(entry: string): LogEntry | undefined {
  const first = entry.indexOf(' ')
  const second = entry.indexOf(' ', first + 1)
  const third = entry.indexOf(' ', second + 1)
  if (first < 0 || second < 0 || third < 0) return undefined
  const seq = Number(entry.slice(0, first))
  const stream = entry.slice(second + 1, third)
  return { seq, at: Number(entry.slice(first + 1, second)), stream, id: eventId(stream, seq), data: entry.slice(third + 1) }
}
