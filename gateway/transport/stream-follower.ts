/**
 * Serves a client that resumed, with Last-Event-ID, a POST stream this worker does not produce: the
 * stream lives on another worker (or host), or it ended. Replays what the log holds after that id,
 * then forwards what the producer relays on the bus (stream-relay.ts) until the stream ends. Each
 * event goes out once and in order: the subscription starts before the replay, and an event whose
 * sequence number the connection has already passed is dropped. A producer that stops answering
 * probes for `producerTimeoutMs` is gone (killed, crashed): the follower answers the request with an
 * error, logs it like any event, and ends the stream, so the client never waits forever.
 */
import type { ServerResponse } from 'node:http'
import { RpcCode } from '../wire/errors.ts'
import { errorMessage } from '../wire/jsonrpc.ts'
import type { BusMessage, StreamProbeMessage } from '../store/bus-message.ts'
import type { SessionStore } from '../store/store.ts'
import { parseEventId } from '../store/store.ts'
import { drained, SendBacklog, type SendBufferLimits } from './send-backlog.ts'
import { sseEvent } from './sse.ts'
import { END_MARKER, relayChannel, requestIdOf } from './stream-relay.ts'

export interface FollowOptions {
  /** The route's probe channel (stream-relay.ts). */
  probeChannel: string
  /** Time without a sign of life from the producer before the follower answers in its place. */
  producerTimeoutMs: number
  /** What the connection may hold unsent; over it the client is cut (it may resume again). */
  sendBuffer: SendBufferLimits
}

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
export async function followStream(store: SessionStore, sessionId: string, afterId: string, raw: ServerResponse, open: () => void, options: FollowOptions): Promise<boolean> {
  const after = parseEventId(afterId)
  if (after === undefined) return false
  let last = after.seq
  let ended = false
  let early: BusMessage[] | undefined = []
  let keepAlive: NodeJS.Timeout | undefined
  let probing: NodeJS.Timeout | undefined
  let lastSignOfLife = Date.now()
  const backlog = new SendBacklog(options.sendBuffer)

  const stop = (): void => {
    ended = true
    unsubscribe()
    clearInterval(keepAlive)
    clearInterval(probing)
  }
  const end = (): void => {
    if (ended) return
    stop()
    raw.end()
  }
  const write = (id: string, data: string): void => {
    const seq = parseEventId(id)?.seq ?? 0
    if (ended || seq <= last) return
    last = seq
    if (data === END_MARKER) return end()
    if (!backlog.admit(raw.writableLength)) {
      // The client does not read: cut it; the events stay in the log for its next resume.
      stop()
      raw.destroy()
      return
    }
    raw.write(sseEvent(data, id))
    if (isFinalResponse(data)) end()
  }
  const forward = (message: BusMessage): void => {
    lastSignOfLife = Date.now()
    if (message.type === 'event') write(message.id, message.data)
    else if (message.type === 'end') end()
  }
  /** The producer is gone: answer the request in its place (in the log too, for a later resume), then end. */
  const answerForTheProducer = async (): Promise<void> => {
    clearInterval(probing)
    const requestId = requestIdOf(after.stream)
    if (requestId !== undefined) {
      const data = JSON.stringify(errorMessage(requestId, RpcCode.InternalError, 'The worker serving this request stopped before answering; send the request again'))
      try {
        write(await store.append(sessionId, after.stream, data), data)
        await store.append(sessionId, after.stream, END_MARKER)
      } catch {
        // The store is away too: the client still gets the answer, without an id to resume from.
        if (!ended) raw.write(sseEvent(data))
      }
    }
    end()
  }
  const unsubscribe = store.bus.subscribe(relayChannel(sessionId, after.stream), (message) => {
    if (early === undefined) return forward(message)
    early.push(message)
    // The client stopped reading its replay while the producer goes on: cut it, it may resume again.
    if (early.length > options.sendBuffer.maxMessages) raw.destroy()
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
  raw.once('close', stop)
  for (const event of missed.events) {
    // A long replay goes at the client's pace (events relayed meanwhile wait in `early`).
    if (raw.writableNeedDrain && !(await drained(raw))) break
    write(event.id, event.data)
  }
  const queued = early
  early = undefined
  for (const message of queued) forward(message)
  if (!ended) {
    keepAlive = setInterval(() => raw.write(': keepalive\n\n'), KEEPALIVE_MS)
    keepAlive.unref()
    // Ask a few times per timeout; any event or answer on the stream's channel counts as life.
    const probe: StreamProbeMessage = { type: 'probe', sessionId, streamId: after.stream }
    probing = setInterval(() => {
      if (Date.now() - lastSignOfLife >= options.producerTimeoutMs) void answerForTheProducer()
      else store.bus.publish(options.probeChannel, probe).catch(() => undefined)
    }, Math.max(50, options.producerTimeoutMs / 3))
    probing.unref()
    store.bus.publish(options.probeChannel, probe).catch(() => undefined)
  }
  return true
}
