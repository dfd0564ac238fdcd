/**
 * The `RequestSink` of one POSTed request: a JSON response when the request sends nothing before its
 * result (the hot path: one write, no store call), an SSE stream as soon as it sends anything else
 * (progress, logs, server→client requests). A streaming exchange registers its channel so a client
 * that lost the connection can resume it with GET + Last-Event-ID.
 */
import { ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import type { JsonRpcMessage, JsonRpcResponse, RequestId } from '../wire/jsonrpc.ts'
import { messageText } from '../wire/message-text.ts'
import type { RequestSink } from '../protocol/sink.ts'
import type { SessionStore } from '../store/store.ts'
import type { RequestLog } from './request-log.ts'
import { SseChannel, sseHeaders } from './sse.ts'
import type { SendBufferLimits } from './send-backlog.ts'
import { postStreamId } from './stream-relay.ts'

/** Streams this worker is producing, by session and stream id, for resumption. */
export type OpenStreams = Map<string, SseChannel>

const streamTag = Math.random().toString(36).slice(2, 6)
let streamSeq = 0

/** What every exchange of a route (and wire) shares: made once, not per request. */
export interface ExchangeOptions {
  store: SessionStore
  resumable: boolean
  openStreams: OpenStreams
  /** Where each exchange's end is written and counted. */
  log: RequestLog
  /** Set on the stateless wire, for the log line. */
  era?: string
  /** What a stream may hold unsent for a client that does not read. */
  sendBuffer: SendBufferLimits
}

/** An exchange's state (plain numbers: Node strips types but does not compile enums). */
const State = { Pending: 0, Streaming: 1, Done: 2 } as const
type State = (typeof State)[keyof typeof State]

/** Where an exchange answers: Fastify's reply, or the response of a POST the hot path serves (hot-post.ts). */
export type ExchangeReply = FastifyReply | ServerResponse

export class PostExchange implements RequestSink {
  #state: State = State.Pending
  #channel: SseChannel | undefined
  readonly #reply: ExchangeReply
  /** undefined on the stateless wire: no session header, no event ids. */
  readonly #sessionId: string | undefined
  readonly #options: ExchangeOptions
  readonly #method: string
  readonly #started: number

  /** The request answered, named in a resumable stream's id (a follower elsewhere may have to answer it). */
  readonly #requestId: RequestId | undefined

  /** Who made the request, for its log line. */
  readonly #principal: string | undefined

  /** `started` is `options.log.start()`: the exchange writes the request's log line when it ends. */
  constructor(reply: ExchangeReply, sessionId: string | undefined, method: string, started: number, options: ExchangeOptions, requestId?: RequestId, principal?: string) {
    this.#reply = reply
    this.#principal = principal
    this.#sessionId = sessionId
    this.#method = method
    this.#started = started
    this.#options = options
    this.#requestId = requestId
  }

  send(message: JsonRpcMessage): void {
    if (this.#state === State.Done) return
    this.#stream().send(messageText(message))
  }

  /** `httpStatus` and `headers` apply while nothing was streamed yet (a stream has already said 200). */
  respond(message: JsonRpcResponse, httpStatus = 200, headers?: Readonly<Record<string, string>>): void {
    if (this.#state === State.Done) return
    if (this.#state === State.Pending) {
      this.#state = State.Done
      // The hot path's one write, straight to the socket: Fastify's send pipeline (hooks, serializer,
      // header normalisation) has nothing to add to a JSON string made here, and it cost several µs
      // of a ~60 µs tools/call. SSE answers bypass it the same way.
      const body = messageText(message)
      // Headers as a flat list: Node takes them as they are, without walking an object's keys.
      const head = ['content-type', 'application/json', 'content-length', String(Buffer.byteLength(body))]
      if (headers !== undefined) for (const name in headers) head.push(name, headers[name]!)
      this.#raw().writeHead(httpStatus, head).end(body)
      this.#log(httpStatus)
      return
    }
    this.#channel!.send(messageText(message))
    this.#finish()
  }

  abandon(): void {
    if (this.#state === State.Done) return
    if (this.#state === State.Pending) {
      // Cancelled before anything was sent: nothing follows, so say so plainly.
      this.#state = State.Done
      this.#raw().writeHead(202).end()
      this.#log(202)
      return
    }
    this.#finish()
  }

  /** Calls `listener` if the client goes away before the exchange is done (stateless cancellation). */
  onClose(listener: () => void): void {
    this.#rawResponse().once('close', () => {
      if (this.#state !== State.Done) listener()
    })
  }

  detach(retryMs: number): boolean {
    if (!this.#options.resumable || this.#sessionId === undefined || this.#state === State.Done) return false
    this.#stream().detach(retryMs)
    return true
  }

  #stream(): SseChannel {
    if (this.#channel !== undefined) return this.#channel
    this.#state = State.Streaming
    const resumable = this.#options.resumable && this.#sessionId !== undefined
    const base = `p${streamTag}${(++streamSeq).toString(36)}`
    const streamId = resumable && this.#requestId !== undefined ? postStreamId(base, this.#requestId) : base
    const channel = new SseChannel({ store: this.#options.store, sessionId: this.#sessionId ?? '', streamId, resumable, sendBuffer: this.#options.sendBuffer })
    this.#channel = channel
    const raw = this.#raw()
    raw.writeHead(200, sseHeaders(this.#sessionId))
    channel.attach(raw)
    channel.prime()
    if (resumable) this.#options.openStreams.set(`${this.#sessionId} ${streamId}`, channel)
    return channel
  }

  #log(status: number): void {
    this.#options.log.end(this.#started, this.#method, status, this.#sessionId, this.#options.era, this.#principal)
  }

  /** The response, Fastify told that the exchange answers on it itself. */
  #raw(): ServerResponse {
    const reply = this.#reply
    if (reply instanceof ServerResponse) return reply
    reply.hijack()
    return reply.raw
  }

  #rawResponse(): ServerResponse {
    return this.#reply instanceof ServerResponse ? this.#reply : this.#reply.raw
  }

  #finish(): void {
    this.#state = State.Done
    const channel = this.#channel!
    void channel.finish().then(() => this.#options.openStreams.delete(`${this.#sessionId} ${channel.streamId}`))
    this.#log(200)
  }
}
