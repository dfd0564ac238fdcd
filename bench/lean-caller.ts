/**
 * The paced loader's tools/call client (proxy-hop.ts, proxy-hop-tail.ts): the gateway's lean
 * HTTP/1.1 pool (gateway/client/http1.ts) instead of node:http's ClientRequest. The loader shares
 * the load core with U while P is measured, so what it spends there is taken from U's core: with
 * ClientRequest it spent 82-188 µs a call (0.6-0.9x of what U spends serving it), with this 35-62
 * (bench/README.md, "Where the p99 comes from").
 */
import { Http1Pool } from '../gateway/client/http1.ts'
import { LightAbort } from '../gateway/wire/abort-like.ts'
import { answerOf, PROTOCOL_VERSION } from './mcp-http.ts'

const NEVER = new LightAbort()
/** Largest answer body read. */
const MAX_BODY = 1024 * 1024

let idSeq = 0

export class LeanCaller {
  readonly #url: URL
  readonly #pool = new Http1Pool(256)
  readonly #exchange = this.#pool.exchange()
  /** One headers object per session: the pool writes each object's header lines once. */
  readonly #headers = new Map<string, Record<string, string>>()

  constructor(url: string) {
    this.#url = new URL(url)
  }

  /** tools/call on `sessionId`; the text of the result's first content block. */
  async callTool(name: string, args: object, sessionId: string): Promise<string> {
    let headers = this.#headers.get(sessionId)
    if (headers === undefined) {
      headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL_VERSION }
      this.#headers.set(sessionId, headers)
    }
    const id = ++idSeq
    const answer = await this.#exchange(this.#url, 'POST', headers, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }), NEVER)
    const body = await answer.text(MAX_BODY)
    if (answer.status !== 200) throw new Error(`tools/call: HTTP ${answer.status} ${body.slice(0, 200)}`)
    const text = answerOf(body, id)?.result?.content?.[0]?.text
    if (text === undefined) throw new Error(`tools/call ${name}: ${body.slice(0, 200)}`)
    return text
  }
}
