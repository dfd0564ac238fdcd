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
 */
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
