/**
 * How a POST stream outlives its connection across workers. While no connection carries a stream on
 * the worker producing it (the client was cut off, or the handler called closeStream), that worker
 * publishes each new event, and the stream's end, on the stream's bus channel; a worker where the
 * client resumed (stream-follower.ts) replays the log, then forwards these, dropping what the replay
 * already sent.
 *
 *   producer (worker A)                          follower (worker B, GET + Last-Event-ID)
 *   append(event k+1) ──► log ◄──────────────── replay after k
 *        └──► bus "stream:<session>:<stream>" ──► forward if seq > last written ──► client
 *   finish ──► append end marker ──► bus { end } ──► end the response
 *
 * A follower cannot tell a quiet producer from a dead one by waiting, so it asks: a probe on the
 * route's probe channel, which the producer (whichever worker holds the stream) answers with
 * { alive } on the stream's channel. After `producer_timeout` without a sign of life the follower
 * answers the request itself with an error, logged like any event, and ends the stream. The stream id
 * carries the request id for that (`<tag><seq>.n<number>` or `.s<base64url string>`).
 */
import type { RequestId } from '../wire/jsonrpc.ts'
import type { SessionStore } from '../store/store.ts'

/** The data of the event that marks, in the log, the end of a POST stream (its priming event is empty too, but always first). */
export const END_MARKER = ''

/** The bus channel of one stream of one session. */
export function relayChannel(sessionId: string, streamId: string): string {
  return `stream:${sessionId}:${streamId}`
}

/** Publishes a logged event of a stream no connection carries here, for a worker that resumed it. Best effort. */
export function relayEvent(store: SessionStore, sessionId: string, streamId: string, id: string, data: string): void {
  store.bus.publish(relayChannel(sessionId, streamId), { type: 'event', id, data }).catch(() => undefined)
}

/**
 * Marks the end of a stream no connection carries here: in the log, for a client that resumes later,
 * and on the bus, for one that follows it now. Best effort: a follower also ends on the final response.
 */
export async function relayEnd(store: SessionStore, sessionId: string, streamId: string): Promise<void> {
  try {
    const id = await store.append(sessionId, streamId, END_MARKER)
    await store.bus.publish(relayChannel(sessionId, streamId), { type: 'end', id })
  } catch {
    // The store is away; the follower ends when the client gives up or the store comes back.
  }
}

/** The bus channel where followers of a route's streams ask whether a producer is still there. */
export function probeChannel(route: string): string {
  return `stream-probe:${route}`
}

/** A POST stream's id: unique per process (`base`), naming the request it answers (`n<number>` or `s<base64url>`). */
export function postStreamId(base: string, requestId: RequestId): string {
  return typeof requestId === 'number' ? `${base}.n${requestId}` : `${base}.s${Buffer.from(requestId).toString('base64url')}`
}

/** The request a POST stream answers, read from its id; undefined for other streams. */
export function requestIdOf(streamId: string): RequestId | undefined {
  // The base has no dot (a tag and a base-36 number); a number id may (1.5).
  const dot = streamId.indexOf('.')
  if (dot < 0) return undefined
  const encoded = streamId.slice(dot + 2)
  switch (streamId[dot + 1]) {
    case 'n': {
      const id = Number(encoded)
      return encoded !== '' && Number.isFinite(id) ? id : undefined
    }
    case 's':
      return Buffer.from(encoded, 'base64url').toString('utf8')
    default:
      return undefined
  }
}
