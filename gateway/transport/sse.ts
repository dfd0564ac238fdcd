/**
 * Server-Sent Events framing and one SSE channel: a logical stream of a session whose events may
 * outlive the HTTP connection that carries them. With resumability each event is appended to the
 * store's event log first and carries its id, so a client that lost the connection resumes with
 * `GET` + `Last-Event-ID` and misses nothing; writes are chained so ids and bytes stay in order.
 */
import type { ServerResponse } from 'node:http'
import { STANDALONE_STREAM } from '../protocol/sink.ts'
import type { SessionStore } from '../store/store.ts'
import { parseEventId } from '../store/store.ts'
import { drained, SendBacklog, type SendBufferLimits } from './send-backlog.ts'
import { relayEnd, relayEvent } from './stream-relay.ts'

/** Milliseconds a client should wait before reconnecting (sent in the priming event). */
export const RECONNECT_DELAY_MS = 1000

export function sseHeaders(sessionId: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  }
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
  return headers
}

/** One SSE event; `data` must be a single line (JSON.stringify output is). */
export function sseEvent(data: string, id?: string, retryMs?: number): string {
  let event = id === undefined ? '' : `id: ${id}\n`
  if (retryMs !== undefined) event += `retry: ${retryMs}\n`
  return `${event}data: ${data}\n\n`
}

export interface ChannelOptions {
  store: SessionStore
  sessionId: string
  streamId: string
  resumable: boolean
  /** What the connection may hold unsent; over it the connection is cut (the stream goes on in the log). */
  sendBuffer: SendBufferLimits
}

/** The channels that hold a connection in this process, so a draining worker can let them go. */
const attached = new Set<SseChannel>()

/** SSE connections this process holds now (for the metrics). */
export function openStreamCount(): number {
  return attached.size
}

/**
 * Ends every SSE connection of this process with a `retry` hint, keeping the streams: their clients
 * reconnect (to another worker) with Last-Event-ID. Used when a worker drains; returns how many.
 */
export function detachAllStreams(retryMs: number): number {
  const channels = [...attached]
  for (const channel of channels) channel.detach(retryMs)
  return channels.length
}

export class SseChannel {
  readonly streamId: string
  #connection: ServerResponse | undefined
  /** After a resume: the highest sequence number the replay covered; logged events up to it are not sent again. */
  #horizon = 0
  #chain: Promise<void> = Promise.resolve()
  /** Steps queued on #chain and not done yet; at 0 an event needing no await is written at once. */
  #pending = 0
  #finished = false
  readonly #options: ChannelOptions
  #onDetach: (() => void) | undefined
  /** The connection corked until the end of this turn of the event loop (see `#write`). */
  #corked: ServerResponse | undefined
  /** Uncorks #corked (once; the end of the turn calls it too). */
  #uncork: (() => void) | undefined
  readonly #backlog: SendBacklog
  /** True while a resume replays the log; events queued behind it are counted against the bound. */
  #replaying = false
  /** Connections cut because their client did not read (for the metrics and tests). */
  static cutSlowReaders = 0

  constructor(options: ChannelOptions) {
    this.#options = options
    this.streamId = options.streamId
    this.#backlog = new SendBacklog(options.sendBuffer)
  }

  get finished(): boolean {
    return this.#finished
  }

  /** Takes over `raw` (headers already written) and, when resumable, writes the priming event. */
  attach(raw: ServerResponse, onDetach?: () => void): void {
    // A client that resumed again: the connection it left is ended, not kept open unwritten.
    const superseded = this.#connection
    if (superseded !== undefined && superseded !== raw) this.#end(superseded)
    this.#connection = raw
    this.#onDetach = onDetach
    attached.add(this)
    raw.once('close', () => {
      if (this.#connection === raw) this.#drop()
    })
  }

  /** Writes the priming event: an id (so the client can resume) and the reconnect delay, no data. */
  prime(): void {
    if (!this.#options.resumable) return
    this.#enqueue('', RECONNECT_DELAY_MS)
  }

  /**
   * Takes over `raw` for a client resuming after `afterId`: waits for what is queued, then writes the
   * logged events after that id and follows the stream live, so nothing is sent twice or skipped.
   * `open` writes the response head once the id is known; resolves to false (nothing written) when the
   * log no longer knows `afterId`.
   */
  resume(raw: ServerResponse, afterId: string, open: () => void, onDetach?: () => void): Promise<boolean> {
    const { store, sessionId } = this.#options
    let found = false
    return this.#queue(async () => {
      const missed = await store.replay(sessionId, afterId)
      if (missed === undefined) return
      found = true
      open()
      this.attach(raw, onDetach)
      this.#replaying = true
      try {
        for (const event of missed.events) {
          if (event.data === '') continue
          // A long replay goes at the client's pace; live events wait behind it (a bounded number, see #queue).
          if (raw.writableNeedDrain) {
            this.#uncork?.()
            if (!(await drained(raw))) return
          }
          this.#write(sseEvent(event.data, event.id))
        }
      } finally {
        this.#replaying = false
      }
      // What another worker logs reaches this channel by sendLogged, maybe after the replay sent it.
      this.#horizon = Math.max(parseEventId(afterId)?.seq ?? 0, ...missed.events.map((event) => parseEventId(event.id)?.seq ?? 0))
      if (this.#finished) {
        this.#end(raw)
        this.#drop()
      }
    }).then(() => found)
  }

  send(data: string): void {
    if (this.#finished) return
    this.#enqueue(data, undefined)
  }

  /** Writes an event that is already in the log under `id`. */
  sendLogged(data: string, id: string): void {
    if (this.#finished) return
    void this.#queue(() => {
      if ((parseEventId(id)?.seq ?? Infinity) > this.#horizon) this.#write(sseEvent(data, id))
    })
  }

  /** Ends the stream after what is queued; the connection closes too, and `onDetach` runs. */
  finish(): Promise<void> {
    this.#finished = true
    return this.#queue(async () => {
      // Nobody here carries the stream: mark its end for a client following or resuming it elsewhere.
      if (this.#connection === undefined && this.#options.resumable && this.streamId !== STANDALONE_STREAM) {
        await relayEnd(this.#options.store, this.#options.sessionId, this.streamId)
      }
      if (this.#connection !== undefined) this.#end(this.#connection)
      // The 'close' listener skips a connection ended here, so stop the keep-alive timer now.
      this.#drop()
    })
  }

  /** Closes the connection but not the stream: later events wait in the log for a resuming client. */
  detach(retryMs: number): void {
    void this.#queue(() => {
      if (this.#connection !== undefined) this.#end(this.#connection, `retry: ${retryMs}\n\n`)
      this.#drop()
    })
  }

  /** Writes an SSE comment on the open connection (keep-alive for proxies and load balancers). */
  comment(text: string): void {
    this.#connection?.write(`: ${text}\n\n`)
  }

  #enqueue(data: string, retryMs: number | undefined): void {
    const { store, sessionId, streamId, resumable } = this.#options
    if (this.#pending === 0) {
      // Nothing queued ahead of this event, and nothing to wait for: it goes now, no promise made.
      if (!resumable) return this.#write(sseEvent(data))
      if (store.appendNow !== undefined) return this.#deliver(store.appendNow(sessionId, streamId, data), data, retryMs)
    }
    if (!resumable) {
      void this.#queue(() => this.#write(sseEvent(data)))
      return
    }
    void this.#queue(() =>
      store.append(sessionId, streamId, data).then(
        (id) => this.#deliver(id, data, retryMs),
        // The log is unreachable: deliver live without an id rather than lose the event.
        () => this.#write(sseEvent(data)),
      ),
    )
  }

  /** An event now in the log: to the connection, or, when none carries the stream here, to the bus for a follower. */
  #deliver(id: string, data: string, retryMs: number | undefined): void {
    if (this.#connection !== undefined) this.#write(sseEvent(data, id, retryMs))
    else relayEvent(this.#options.store, this.#options.sessionId, this.streamId, id, data)
  }

  /** Runs `step` after everything queued before it, so ids and bytes stay in order. */
  #queue(step: () => unknown): Promise<void> {
    this.#pending++
    // A client that stopped reading in the middle of its replay: what waits behind it is bounded too.
    if (this.#replaying && this.#pending > this.#backlog.limits.maxMessages && this.#connection !== undefined) {
      this.#cutSlowReader(this.#connection)
    }
    this.#chain = this.#chain.then(step).then(
      () => void this.#pending--,
      (error: unknown) => {
        this.#pending--
        throw error
      },
    )
    return this.#chain
  }

  /**
   * Writes on the connection, corked until the event loop's turn ends: the events a handler sends in
   * one go (progress, then its result) leave in one packet and one syscall, not one each.
   */
  #write(chunk: string): void {
    const connection = this.#connection
    if (connection === undefined) return
    if (!this.#backlog.admit(connection.writableLength)) {
      // Over the bound: flush what this turn corked, then judge by what the socket would not take.
      this.#uncork?.()
      if (!this.#backlog.admit(connection.writableLength)) return this.#cutSlowReader(connection)
    }
    if (this.#corked !== connection) {
      this.#corked = connection
      connection.cork()
      let done = false
      const uncork = (): void => {
        if (done) return
        done = true
        if (this.#corked === connection) this.#corked = undefined
        if (this.#uncork === uncork) this.#uncork = undefined
        connection.uncork()
      }
      this.#uncork = uncork
      setImmediate(uncork)
    }
    connection.write(chunk)
  }

  /**
   * Ends `connection` after everything written on it. Corked bytes are uncorked first: `end()` on a
   * corked response sends the terminating chunk ahead of them on Node 22 (the client sees the stream
   * end after the first event and never gets the rest, its result included), and ordering them by
   * hand is what the other versions do anyway.
   */
  #end(connection: ServerResponse, chunk?: string): void {
    if (this.#corked === connection) this.#uncork?.()
    while (connection.writableCorked > 0) connection.uncork()
    if (chunk === undefined) connection.end()
    else connection.end(chunk)
  }

  /**
   * The client does not read: drop its connection (destroyed, so what it holds is freed now) but not
   * the stream. Later events go to the log, where a client resuming with Last-Event-ID finds them.
   */
  #cutSlowReader(connection: ServerResponse): void {
    SseChannel.cutSlowReaders++
    this.#uncork?.()
    connection.destroy()
    this.#drop()
  }

  #drop(): void {
    attached.delete(this)
    this.#connection = undefined
    const onDetach = this.#onDetach
    this.#onDetach = undefined
    onDetach?.()
  }
}
