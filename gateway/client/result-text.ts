/**
 * An upstream's JSON answer read for a proxy that passes its result on unread: the result's text is
 * checked (json-scan.ts), not parsed, and goes to the proxy's client as it came, behind that client's
 * own id (wire/message-text.ts splices it). Parsing it only to serialise it again was ~40 % of the
 * hop's JSON work.
 *
 *   {"jsonrpc":"2.0","id":<the id sent>,"result":R}     (how mcp-edge, and JSON.stringify of resultMessage, write it)
 *   {"result":R,"jsonrpc":"2.0","id":<the id sent>}     (how the official SDKs write it)
 *
 * R must be exactly one JSON object: then the whole text is exactly that message, so nothing in R can
 * close the object early and add members (a second "id", another call's answer) to what the client
 * reads, and an `"id"` inside R is R's own. Any other text (another shape, another id, an error, a
 * batch, whitespace between the members, R that the scan does not accept, R whose `isError` is true,
 * which the proxy reads) is not taken here: the transport parses it whole, as every answer was before.
 */
import type { JsonRpcResponse, RequestId } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'
import { VerbatimResult } from '../wire/message-text.ts'
import { PLAIN, scanObject } from './json-scan.ts'

const HEAD = '{"jsonrpc":"2.0","id":'
const RESULT_KEY = ',"result":'
const RESULT_FIRST = '{"result":'
const CLOSE_OBJECT = 0x7d

/** The answer to request `id` with its result unparsed (a VerbatimResult); undefined when `text` is not one of the shapes above. */
export function answerAsSent(text: string, id: RequestId): JsonRpcResponse | undefined {
  // McpClient's ids are numbers; a string id would need its escapes compared.
  if (typeof id !== 'number') return undefined
  const idText = String(id)
  let start: number
  let end: number
  if (text.startsWith(HEAD)) {
    const afterId = HEAD.length + idText.length
    if (!text.startsWith(idText, HEAD.length) || !text.startsWith(RESULT_KEY, afterId) || text.charCodeAt(text.length - 1) !== CLOSE_OBJECT) return undefined
    start = afterId + RESULT_KEY.length
    end = text.length - 1
  } else if (text.startsWith(RESULT_FIRST)) {
    const tail = `,"jsonrpc":"2.0","id":${idText}}`
    if (!text.endsWith(tail)) return undefined
    start = RESULT_FIRST.length
    end = text.length - tail.length
  } else {
    return undefined
  }
  if (scanObject(text, start, end) !== PLAIN) return undefined
  return { jsonrpc: '2.0', id, result: new VerbatimResult(text.slice(start, end)) as unknown as JsonObject }
}
