/**
 * An upstream's JSON answer read so that its result's text can go on as it came: a proxy answers its
 * own client with the upstream's bytes for the result and its own id in front (wire/message-text.ts
 * splices them), instead of serialising again the object it has just parsed.
 *
 *   {"jsonrpc":"2.0","id":<the id sent>,"result":R}     (how mcp-edge and JSON.stringify of resultMessage write it)
 *   {"result":R,"jsonrpc":"2.0","id":<the id sent>}     (how the official SDKs write it)
 *
 * R must parse, alone, as one JSON object: then the whole text is exactly that message, so nothing in
 * R can close the object early and add members (a second "id", another call's answer) to what the
 * client reads, and an `"id"` inside R is R's own. Any other text (another shape, another id, an
 * error, a batch, whitespace between the members, a line break, R not an object or not one value) is not read
 * here: the transport parses it whole, as every answer was before.
 */
import type { JsonRpcResponse, RequestId } from '../wire/jsonrpc.ts'
import type { JsonObject } from '../wire/mcp-types.ts'

const HEAD = '{"jsonrpc":"2.0","id":'
const RESULT_KEY = ',"result":'
const RESULT_FIRST = '{"result":'
const CLOSE_OBJECT = 0x7d

/** The answer to request `id` with its result's text; undefined when `text` is not one of the two shapes above. */
export function answerWithText(text: string, id: RequestId): { message: JsonRpcResponse; resultText: string } | undefined {
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
  if (end <= start) return undefined
  const resultText = text.slice(start, end)
  // A line break can only be whitespace between tokens (JSON escapes them in strings), but an answer
  // on an SSE stream is one `data:` line: such a text is serialised again, as JSON.stringify writes none.
  if (resultText.includes('\n') || resultText.includes('\r')) return undefined
  let result: unknown
  try {
    result = JSON.parse(resultText)
  } catch {
    return undefined
  }
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return undefined
  return { message: { jsonrpc: '2.0', id, result: result as JsonObject }, resultText }
}
