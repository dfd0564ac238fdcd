/**
 * A minimal MCP-over-HTTP client for the runner's setup and measurements (creating sessions,
 * subscribing, calling tools, opening GET streams). Keep-alive sockets, no SDK: the runner must stay
 * cheap next to the server it measures.
 */
import http from 'node:http'
import { SseParser } from '../gateway/client/sse-parser.ts'

export const PROTOCOL_VERSION = '2025-11-25'

export interface HttpAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

export interface McpAnswer {
  id?: number | string
  result?: Record<string, unknown> & { content?: Array<{ type: string; text?: string }> }
  error?: { code: number; message: string }
}

let idSeq = 0

export class McpHttp {
  readonly #url: URL
  readonly #agent: http.Agent

  readonly #headers: http.OutgoingHttpHeaders

  /** `headers` go on every request (an Authorization header on a protected route). */
  constructor(url: string, maxSockets = 50, headers: http.OutgoingHttpHeaders = {}) {
    this.#url = new URL(url)
    this.#headers = headers
    this.#agent = new http.Agent({ keepAlive: true, maxSockets })
  }

  /** POSTs one JSON-RPC message; resolves with the raw answer (JSON or SSE body). */
  post(message: object, sessionId?: string, extraHeaders: http.OutgoingHttpHeaders = {}): Promise<HttpAnswer> {
    const body = JSON.stringify(message)
    const headers: http.OutgoingHttpHeaders = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(body),
      ...this.#headers,
      ...extraHeaders,
    }
    if (sessionId !== undefined) {
      headers['mcp-session-id'] = sessionId
      headers['mcp-protocol-version'] = PROTOCOL_VERSION
    }
    return new Promise((resolve, reject) => {
      const request = http.request(this.#url, { method: 'POST', agent: this.#agent, headers }, (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (text += chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }))
        response.on('error', reject)
      })
      request.on('error', reject)
      request.end(body)
    })
  }

  /** Sends a request and returns its JSON-RPC answer; throws on an HTTP error or a JSON-RPC error. */
  async request(
    method: string,
    params: object,
    sessionId?: string,
    extraHeaders?: http.OutgoingHttpHeaders,
  ): Promise<McpAnswer & { headers: http.IncomingHttpHeaders }> {
    const id = ++idSeq
    const answer = await this.post({ jsonrpc: '2.0', id, method, params }, sessionId, extraHeaders)
    if (answer.status !== 200) throw new Error(`${method}: HTTP ${answer.status} ${answer.body.slice(0, 200)}`)
    const message = answerOf(answer.body, id)
    if (message === undefined) throw new Error(`${method}: no answer with id ${id} in ${answer.body.slice(0, 200)}`)
    if (message.error !== undefined) throw new Error(`${method}: ${message.error.code} ${message.error.message}`)
    return { ...message, headers: answer.headers }
  }

  /** initialize + notifications/initialized; resolves with the new session id. */
  async initialize(): Promise<string> {
    const answer = await this.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'mcp-edge-bench', version: '1.0.0' },
    })
    const sessionId = answer.headers['mcp-session-id']
    if (typeof sessionId !== 'string') throw new Error('initialize: no Mcp-Session-Id header')
    const initialized = await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)
    if (initialized.status !== 202) throw new Error(`notifications/initialized: HTTP ${initialized.status}`)
    return sessionId
  }

  /**
   * tools/call; resolves with the text of the result's first content block. With `statelessVersion`
   * it goes on the 2026-07-28 stateless wire (version header, routing headers, `_meta` envelope).
   */
  async callTool(name: string, args: object, sessionId?: string, statelessVersion?: string): Promise<string> {
    const answer =
      statelessVersion === undefined
        ? await this.request('tools/call', { name, arguments: args }, sessionId)
        : await this.request(
            'tools/call',
            {
              name,
              arguments: args,
              _meta: { 'io.modelcontextprotocol/protocolVersion': statelessVersion, 'io.modelcontextprotocol/clientCapabilities': {} },
            },
            undefined,
            { 'mcp-protocol-version': statelessVersion, 'mcp-method': 'tools/call', 'mcp-name': name },
          )
    const text = answer.result?.content?.[0]?.text
    if (answer.result?.isError === true || text === undefined) throw new Error(`tools/call ${name}: ${JSON.stringify(answer.result)}`)
    return text
  }

  /** Closes the keep-alive sockets. */
  close(): void {
    this.#agent.destroy()
  }
}

/** The message with `id` in a JSON body or in an SSE body's data lines. */
export function answerOf(body: string, id: number | string): McpAnswer | undefined {
  const candidates = body.startsWith('{') ? [body] : new SseParser().push(body, true).map((event) => event.data)
  for (const candidate of candidates) {
    if (candidate === '') continue
    const message = JSON.parse(candidate) as McpAnswer
    if (message.id === id) return message
  }
  return undefined
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at a time; results in order. */
export async function pool<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      results[i] = await task(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  return results
}
