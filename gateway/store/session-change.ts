/** How a `SessionChange` alters a record; shared by every backend so they agree on the result. */
import type { SessionChange, SessionRecord, UpstreamSession } from './store.ts'

/** Applies `change` to `record` in place. */
export function applyChange(record: SessionRecord, change: SessionChange): void {
  if ('initialized' in change) record.initialized = true
  else if ('logLevel' in change) record.logLevel = change.logLevel
  else if ('subscribe' in change) addOnce(record.subscriptions, change.subscribe, change.max)
  else if ('unsubscribe' in change) removeAll(record.subscriptions, change.unsubscribe)
  else if ('hide' in change) addOnce(record.hidden, change.hide, change.max)
  else if ('show' in change) removeAll(record.hidden, change.show)
  else if ('upstream' in change) setUpstream(record, change.upstream, change.session)
  else if ('catalogue' in change) record.catalogue = Math.max(record.catalogue ?? 0, change.catalogue)
}

// A new object rather than a change in place: a worker may still hold the previous record.
function setUpstream(record: SessionRecord, name: string, session: UpstreamSession | null): void {
  const upstreams = { ...record.upstreams }
  if (session === null) delete upstreams[name]
  else upstreams[name] = session
  if (Object.keys(upstreams).length === 0) delete record.upstreams
  else record.upstreams = upstreams
}

function addOnce(list: string[], value: string, max = Infinity): void {
  if (!list.includes(value) && list.length < max) list.push(value)
}

function removeAll(list: string[], value: string): void {
  const index = list.indexOf(value)
  if (index >= 0) list.splice(index, 1)
}
