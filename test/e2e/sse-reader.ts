// Reads SSE events from a fetch Response, one at a time, for raw-HTTP tests: the client's parser
// (correct at every byte split) behind a pull interface.
import { SseParser } from '../../gateway/client/sse-parser.ts'

/** An event as these tests compare it: its id, retry and data. */
export interface SseEvent { id?: string; retry?: number; data: string }

export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<string>
  readonly #parser = new SseParser()
  readonly #ready: SseEvent[] = []
  #ended = false

  constructor(response: Response) {
    this.#reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  }

  /** The next event, or undefined when the stream ended. */
  async next(): Promise<SseEvent | undefined> {
    while (this.#ready.length === 0 && !this.#ended) {
      const { value, done } = await this.#reader.read()
      if (done) this.#ended = true
      for (const { id, retry, data } of this.#parser.push(value ?? '', done)) {
        const event: SseEvent = { data }
        if (id !== undefined) event.id = id
        if (retry !== undefined) event.retry = retry
        this.#ready.push(event)
      }
    }
    return this.#ready.shift()
  }

  /** Every remaining event until the stream ends. */
  async rest(): Promise<SseEvent[]> {
    const events: SseEvent[] = []
    for (let event = await this.next(); event !== undefined; event = await this.next()) events.push(event)
    return events
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel()
  }
}

/** A raw JSON-RPC POST on a session. */
export function post(url: string, sessionId: string | undefined, body: object, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal })
}

/** Initializes a session over raw HTTP and returns its id. */
export async function rawSession(url: string, capabilities: object = {}): Promise<string> {
  const response = await post(url, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } } })
  const sessionId = response.headers.get('mcp-session-id')!
  await response.text()
  await (await post(url, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' })).text()
  return sessionId
}
