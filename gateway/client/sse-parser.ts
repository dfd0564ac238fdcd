/**
 * A Server-Sent Events parser (WHATWG HTML §9.2.6 "Interpreting an event stream"): lines end with
 * CRLF, LF or CR; `data` lines join with LF; `id` and `retry` are reported with the event that
 * carries them even when its data is empty, because MCP's priming event is exactly that (an id, a
 * retry, no data) and the client must remember both to resume.
 */

import { ProtocolError } from './errors.ts'
import type { JsonRpcMessage } from '../wire/jsonrpc.ts'

export interface SseEvent {
  /** The `event` field, `message` when absent. */
  event: string
  data: string
  /** The `id` field of this event, when it had one. */
  id?: string
  /** The `retry` field of this event in milliseconds, when it had a valid one. */
  retry?: number
}

export class SseParser {
  #buffer = ''
  #dataLength = 0

  /** Characters held for the event being read (its data lines and the unfinished line). */
  get buffered(): number {
    return this.#dataLength + this.#buffer.length
  }

  #started = false
  #data: string[] = []
  #event = ''
  #id: string | undefined
  #retry: number | undefined

  /** Feeds decoded text; returns the events it completed. `final` says no more text follows. */
  push(text: string, final = false): SseEvent[] {
    this.#buffer += text
    if (!this.#started && this.#buffer.length > 0) {
      this.#started = true
      if (this.#buffer.charCodeAt(0) === 0xfeff) this.#buffer = this.#buffer.slice(1)
    }
    const events: SseEvent[] = []
    let start = 0
    for (let i = 0; i < this.#buffer.length; i++) {
      const char = this.#buffer[i]
      if (char !== '\n' && char !== '\r') continue
      // A CR at the very end may be the first half of a CRLF split across chunks: wait for more.
      if (char === '\r' && i === this.#buffer.length - 1 && !final) break
      const event = this.#line(this.#buffer.slice(start, i))
      if (event !== undefined) events.push(event)
      if (char === '\r' && this.#buffer[i + 1] === '\n') i++
      start = i + 1
    }
    this.#buffer = this.#buffer.slice(start)
    return events
  }

  #line(line: string): SseEvent | undefined {
    if (line === '') return this.#dispatch()
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'data':
        this.#data.push(value)
        this.#dataLength += value.length
        break
      case 'event':
        this.#event = value
        break
      case 'id':
        if (!value.includes('\0')) this.#id = value
        break
      case 'retry':
        if (/^\d+$/.test(value)) this.#retry = Number(value)
        break
    }
    return undefined
  }

  #dispatch(): SseEvent | undefined {
    const nothing = this.#data.length === 0 && this.#id === undefined && this.#retry === undefined
    const event: SseEvent = { event: this.#event || 'message', data: this.#data.join('\n') }
    if (this.#id !== undefined) event.id = this.#id
    if (this.#retry !== undefined) event.retry = this.#retry
    this.#data = []
    this.#dataLength = 0
    this.#event = ''
    this.#id = undefined
    this.#retry = undefined
    return nothing ? undefined : event
  }
}

/**
 * The events of a response body, in order; an event cut off by the end of the body is dropped. With
 * `maxEventBytes`, an event (or a line) growing past it ends the stream with a ProtocolError.
 */
export async function* readSse(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>, maxEventBytes = Infinity): AsyncGenerator<SseEvent> {
  const parser = new SseParser()
  const decoder = new TextDecoder()
  let pending = 0
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const events = parser.push(decoder.decode(chunk, { stream: true }))
    pending = events.length > 0 ? parser.buffered : pending + chunk.byteLength
    if (pending > maxEventBytes) {
      // Leaving the loop by the throw below cancels a ReadableStream and destroys a Node stream too.
      if ('cancel' in body) await body.cancel().catch(() => undefined)
      throw new ProtocolError(`The server sent an SSE event larger than ${maxEventBytes} bytes`)
    }
    yield* events
  }
  yield* parser.push(decoder.decode(), true)
}

/**
 * The JSON-RPC message an SSE event carries: undefined for an event that is not a `message` or has
 * no data, a ProtocolError (to report, and go on reading) when its data is not JSON.
 */
export function messageOf(event: Pick<SseEvent, 'event' | 'data'>): JsonRpcMessage | ProtocolError | undefined {
  if (event.event !== 'message' || event.data === '') return undefined
  try {
    return JSON.parse(event.data) as JsonRpcMessage
  } catch {
    return new ProtocolError(`The server sent an SSE event that is not JSON: ${event.data.slice(0, 200)}`)
  }
}
