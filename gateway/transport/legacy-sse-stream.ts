/**
 * One 2024-11-05 HTTP+SSE stream held by this worker: the session's outlet, written as `event:
 * message` events (no ids: the old transport cannot resume), and the per-worker bounds on how many
 * such streams a client and a route hold.
 *
 *   reply (GET <location>/sse) ─► event: endpoint (the POST URL) ─► event: message … ─► close = the session ends
 *
 * Until its first response (the answer to initialize) the stream carries nothing else: a route-wide
 * notification must not reach a client that has not initialized yet.
 */
import type { ServerResponse } from 'node:http'
import type { SessionOutlet } from '../protocol/sink.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'
import { messageText } from '../wire/message-text.ts'
import { SendBacklog, type SendBufferLimits } from './send-backlog.ts'

/** The outlet of one stream; a client that stops reading past `send_buffer` is cut (its session ends with it). */
export class LegacyStream implements SessionOutlet {
  readonly #raw: ServerResponse
  readonly #backlog: SendBacklog
  #answered = false

  constructor(raw: ServerResponse, sendBuffer: SendBufferLimits) {
    this.#raw = raw
    this.#backlog = new SendBacklog(sendBuffer)
  }

  /** Writes the endpoint event: where the client POSTs its messages. */
  announce(endpoint: string): void {
    this.#raw.write(`event: endpoint\ndata: ${endpoint}\n\n`)
  }

  send(message: JsonRpcMessage): void {
    if (!this.#answered) {
      if ('method' in message) return
      this.#answered = true
    }
    this.#write(messageText(message))
  }

  sendLogged(data: string): void {
    if (this.#answered) this.#write(data)
  }

  comment(text: string): void {
    if (!this.#raw.writableEnded) this.#raw.write(`: ${text}\n\n`)
  }

  close(): void {
    if (!this.#raw.writableEnded) this.#raw.end()
  }

  #write(data: string): void {
    const raw = this.#raw
    if (raw.writableEnded || raw.destroyed) return
    if (!this.#backlog.admit(raw.writableLength)) {
      raw.destroy()
      return
    }
    raw.write(`event: message\ndata: ${data}\n\n`)
  }
}

/** Why a new stream is refused: the client's own bound, or the route's. */
export type StreamRefusal = 'client' | 'route'

/** How many streams each client (principal, else address) and the route hold on this worker. */
export class LegacyStreamCounts {
  readonly perClient: number
  readonly total: number
  readonly #held = new Map<string, number>()
  #size = 0

  constructor(perClient: number, total: number) {
    this.perClient = perClient
    this.total = total
  }

  get size(): number {
    return this.#size
  }

  /** Takes a place for `client`, given back when `raw` closes; the refusal (nothing taken) when over a bound. */
  enter(client: string, raw: ServerResponse): StreamRefusal | undefined {
    const held = this.#held.get(client) ?? 0
    if (held >= this.perClient) return 'client'
    if (this.#size >= this.total) return 'route'
    this.#held.set(client, held + 1)
    this.#size++
    raw.once('close', () => {
      this.#size--
      const left = (this.#held.get(client) ?? 1) - 1
      if (left <= 0) this.#held.delete(client)
      else this.#held.set(client, left)
    })
    return undefined
  }
}
