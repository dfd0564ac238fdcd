// Reads SSE events from a fetch Response, one at a time, for raw-HTTP tests.
export interface SseEvent { id?: string; retry?: number; data: string }

export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<string>
  #buffer = ''

  constructor(response: Response) {
    this.#reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  }

  /** The next event, or undefined when the stream ended. */
  async next(): Promise<SseEvent | undefined> {
    for (;;) {
      const end = this.#buffer.indexOf('\n\n')
      if (end >= 0) {
        const block = this.#buffer.slice(0, end)
        this.#buffer = this.#buffer.slice(end + 2)
        const event: SseEvent = { data: '' }
        let fields = 0
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue
          const colon = line.indexOf(':')
          const field = line.slice(0, colon)
          const value = line.slice(colon + 1).replace(/^ /, '')
          fields++
          if (field === 'id') event.id = value
          else if (field === 'retry') event.retry = Number(value)
          else if (field === 'data') event.data += value
        }
        if (fields > 0) return event
        continue
      }
      const { value, done } = await this.#reader.read()
      if (done) return undefined
      this.#buffer += value
    }
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
