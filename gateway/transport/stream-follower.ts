/**
 * Serves a client that resumed, with Last-Event-ID, a POST stream this worker does not produce: the
 * stream lives on another worker (or host), or it ended. Replays what the log holds after that id,
 * then forwards what the producer relays on the bus (stream-relay.ts) until the stream ends. Each
 * event goes out once and in order: the subscription starts before the replay, and an event whose
 * sequence number the connection has already passed is dropped.
 */
import type { ServerResponse } from 'node:http'
import type { BusMessage, SessionStore } from '../store/store.ts'
import { parseEventId } from '../store/store.ts'
import { sseEvent } from './sse.ts'
import { END_MARKER, relayChannel } from './stream-relay.ts'

const KEEPALIVE_MS = 25_000

/** True for the message that ends a POST stream: the response to the request (no method, a result or an error). */
function isFinalResponse(data: string): boolean {
  if (!data.includes('"result"') && !data.includes('"error"')) return false
  try {
    const message = JSON.parse(data) as Record<string, unknown>
    return !('method' in message) && 'id' in message && ('result' in message || 'error' in message)
  } catch {
    return false
  }
}

/**
 * Replays and follows the stream `afterId` names on `raw`; `open` writes the response head. Resolves
 * to false, having written nothing, when the log does not know `afterId`. Rejects (nothing written)
 * when the store is unavailable.
 */
export async function followStream(store: SessionStore, sessionId: string, afterId: string, raw: ServerResponse, open: () => void): Promise<boolean> {
  const after = parseEventId(afterId)
  if (after === undefined) return false
  let last = after.seq
  let ended = false
  let early: BusMessage[] | undefined = []
  let keepAlive: NodeJS.Timeout | undefined

  const end = (): void => {
    if (ended) return
    ended = true
    unsubscribe()
    clearInterval(keepAlive)
    raw.end()
  }
  const write = (id: string, data: string): void => {
    const seq = parseEventId(id)?.seq ?? 0
    if (ended || seq <= last) return
    last = seq
    if (data === END_MARKER) return end()
    raw.write(sseEvent(data, id))
    if (isFinalResponse(data)) end()
  }
  const forward = (message: BusMessage): void => {
    if (message.type === 'event') write(message.id as string, message.data as string)
    else if (message.type === 'end') end()
  }
  const unsubscribe = store.bus.subscribe(relayChannel(sessionId, after.stream), (message) => {
    if (early !== undefined) early.push(message)
    else forward(message)
  })

  let missed
  try {
    missed = await store.replay(sessionId, afterId)
  } catch (error) {
    unsubscribe()
    throw error
  }
  if (missed === undefined) {
    unsubscribe()
    return false
  }
  open()
  raw.once('close', () => {
    ended = true
    unsubscribe()
    clearInterval(keepAlive)
  })
  for (const event of missed.events) write(event.id, event.data)
  const queued = early
  early = undefined
  for (const message of queued) forward(message)
  if (!ended) {
    keepAlive = setInterval(() => raw.write(': keepalive\n\n'), KEEPALIVE_MS)
    keepAlive.unref()
  }
  return true
}
