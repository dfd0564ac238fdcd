/**
 * GET on a Streamable HTTP route: the session's standalone SSE stream, or, with Last-Event-ID, a
 * stream resumed where the client lost it (replayed from the log, then followed live, from any
 * worker). Followers elsewhere probe whether a stream still has its producer: this worker answers
 * for the streams it holds.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { STANDALONE_STREAM, type SessionOutlet } from '../protocol/sink.ts'
import { parseEventId, type SessionRecord } from '../store/store.ts'
import { EdgeError } from '../wire/errors.ts'
import { accepts, header, type HttpRoute } from './http-route.ts'
import { replyError, writeError } from './reply-error.ts'
import { SseChannel, sseHeaders } from './sse.ts'
import { followStream } from './stream-follower.ts'
import { relayChannel } from './stream-relay.ts'

const KEEPALIVE_MS = 25_000

/** Serves GET on the route's location, and answers the probes of followers on other workers. */
export function registerStream(app: FastifyInstance, http: HttpRoute): void {
  const { endpoint, openStreams, followers, following, sendBuffer } = http
  const { route, store } = endpoint

  // Followers elsewhere ask whether the streams they follow still have a producer: answer for ours.
  if (route.resumability) {
    const stopAnswering = store.bus.subscribe(following.probeChannel, (message) => {
      if (message.type !== 'probe' || !openStreams.has(`${message.sessionId} ${message.streamId}`)) return
      store.bus.publish(relayChannel(message.sessionId, message.streamId), { type: 'alive' }).catch(() => undefined)
    })
    app.addHook('onClose', async () => stopAnswering())
  }

  // No automatic HEAD route: it would run this handler and hold the session's one stream slot.
  app.get(route.location, { exposeHeadRoute: false }, async (request, reply) => {
    if (http.sessionlessMethodNotAllowed(request, reply)) return reply
    if (await http.overLimit(request, reply)) return reply
    if (!accepts(request.headers.accept, 'text/event-stream', 'text')) {
      return replyError(reply, new EdgeError('MCP_EDGE_NOT_ACCEPTABLE', 'Not Acceptable: Accept must list text/event-stream'))
    }
    const record = await http.sessionFor(request, reply, null)
    if (record === undefined) return reply
    const lastEventId = header(request, 'last-event-id')
    if (lastEventId !== undefined && route.resumability) return resume(record, lastEventId, reply)

    const channel = new SseChannel({ store, sessionId: record.id, streamId: STANDALONE_STREAM, resumable: route.resumability, sendBuffer })
    const outlet = standaloneOutlet(channel)
    if (!endpoint.openOutlet(record.id, outlet)) return conflict(reply)
    reply.hijack()
    reply.raw.writeHead(200, sseHeaders(record.id))
    // Without resumability no priming event follows: send the head now, not with the first event.
    reply.raw.flushHeaders()
    channel.attach(reply.raw, keepAlive(channel, record.id, () => endpoint.closeOutlet(record.id, outlet)))
    channel.prime()
    return reply
  })

  /**
   * Replays what the client missed on the stream its last event id names, then follows it live. The
   * standalone stream has one place per session (409 beyond it); a request's stream counts against
   * `max_followers` (429 beyond it). An id naming a stream the log does not hold is refused at once.
   */
  async function resume(record: SessionRecord, lastEventId: string, reply: FastifyReply): Promise<FastifyReply> {
    const streamId = parseEventId(lastEventId)?.stream
    if (streamId === undefined) return replyError(reply, new EdgeError('MCP_EDGE_BAD_EVENT_ID', `Malformed Last-Event-ID ${lastEventId}`))
    if (streamId === STANDALONE_STREAM) return resumeStandalone(record, lastEventId, reply)
    if (!followers.enter(record.id, reply.raw)) {
      return replyError(reply, new EdgeError('MCP_EDGE_TOO_MANY_FOLLOWERS', `Too many resumed streams on this session (max_followers ${followers.max}); close one first`))
    }
    const channel = openStreams.get(`${record.id} ${streamId}`)
    if (channel === undefined) {
      // The stream lives on another worker (or host), or it ended: replay the log, then follow the bus.
      const open = (): void => {
        reply.hijack()
        reply.raw.writeHead(200, sseHeaders(record.id))
        reply.raw.flushHeaders()
      }
      if (await followStream(store, record.id, lastEventId, reply.raw, open, following)) return reply
      return replyError(reply, unknownEventId(lastEventId))
    }
    reply.hijack()
    const raw = reply.raw
    const open = (): void => {
      raw.writeHead(200, sseHeaders(record.id))
      raw.flushHeaders() // when nothing was missed, no event follows soon
    }
    if (!(await channel.resume(raw, lastEventId, open))) {
      writeError(raw, unknownEventId(lastEventId))
    }
    return reply
  }

  /**
   * The session's standalone stream, resumed: its missed events, then live. When the log holds none of
   * its events (they expired while nobody listened) the stream starts afresh: it is the session's own,
   * so it exists as long as the session does.
   */
  async function resumeStandalone(record: SessionRecord, lastEventId: string, reply: FastifyReply): Promise<FastifyReply> {
    const channel = new SseChannel({ store, sessionId: record.id, streamId: STANDALONE_STREAM, resumable: true, sendBuffer })
    const outlet = standaloneOutlet(channel)
    if (!endpoint.openOutlet(record.id, outlet)) return conflict(reply)
    const onDetach = keepAlive(channel, record.id, () => endpoint.closeOutlet(record.id, outlet))
    reply.hijack()
    const raw = reply.raw
    const open = (): void => {
      raw.writeHead(200, sseHeaders(record.id))
      raw.flushHeaders()
    }
    if (!(await channel.resume(raw, lastEventId, open, onDetach))) {
      open()
      channel.attach(raw, onDetach)
      channel.prime()
    }
    return reply
  }

  function standaloneOutlet(channel: SseChannel): SessionOutlet {
    return {
      send: (message) => channel.send(JSON.stringify(message)),
      sendLogged: (data, eventId) => channel.sendLogged(data, eventId),
      close: () => void channel.finish(),
    }
  }

  function conflict(reply: FastifyReply): FastifyReply {
    return replyError(reply, new EdgeError('MCP_EDGE_STREAM_CONFLICT'))
  }

  function unknownEventId(lastEventId: string): EdgeError {
    return new EdgeError('MCP_EDGE_UNKNOWN_EVENT_ID', `Unknown Last-Event-ID ${lastEventId}: it expired or never existed; open a new stream`)
  }

  /**
   * Starts keep-alive comments on a standalone stream; each also pushes the session's idle expiry
   * back, since a client that only listens is not idle. The returned function stops them and runs `onClose`.
   */
  function keepAlive(channel: SseChannel, sessionId: string, onClose: () => void): () => void {
    const timer = setInterval(() => {
      channel.comment('keepalive')
      store.touch(sessionId)
    }, KEEPALIVE_MS)
    timer.unref()
    return () => {
      clearInterval(timer)
      onClose()
    }
  }
}
