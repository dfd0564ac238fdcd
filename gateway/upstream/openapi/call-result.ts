/**
 * An API's answer as a tool result the model reads:
 *
 *   2xx JSON object  ─► structuredContent + the same JSON as text (checked against the outputSchema)
 *   2xx other JSON   ─► text
 *   2xx text/*, XML  ─► text
 *   2xx image/audio  ─► image / audio content (base64)
 *   2xx other bytes  ─► an embedded resource with a blob
 *   4xx / 5xx        ─► isError: the upstream, the status, and the API's error body (truncated)
 *
 * `_meta["mcp-edge/http-status"]` carries the status in every case.
 */
import type { ValidateFunction } from 'ajv'
import { describeErrors } from '../../registry/json-schema.ts'
import type { JsonObject } from '../../wire/mcp-types.ts'
import type { RestAnswer } from './rest-exchange.ts'
import { isJsonType } from './operations.ts'

/** The `_meta` key of the API's HTTP status. */
export const META_HTTP_STATUS = 'mcp-edge/http-status'
/** Characters of an error body the model sees. */
const MAX_ERROR_TEXT = 2048

const TEXTUAL = /^(text\/|application\/(xml|yaml|x-yaml|javascript|x-www-form-urlencoded|graphql)|application\/[a-z0-9.+-]+\+xml$)/

/** The result of an answered call of `operation` (`upstream` and `operationId` name it in errors). */
export function callResult(answer: RestAnswer, upstream: string, operationId: string, output: ValidateFunction | undefined): JsonObject {
  const result = mapAnswer(answer, upstream, operationId, output)
  // A tool with an outputSchema must answer structuredContent (clients check it) or be an error.
  if (output === undefined || result.isError === true || result.structuredContent !== undefined) return result
  const text = `Upstream "${upstream}" answered ${operationId} without the JSON object its documented schema describes (${answer.mediaType || 'no content type'}, ${answer.body.byteLength} bytes)`
  return { content: [{ type: 'text', text }], isError: true, _meta: result._meta }
}

function mapAnswer(answer: RestAnswer, upstream: string, operationId: string, output: ValidateFunction | undefined): JsonObject {
  const meta = { [META_HTTP_STATUS]: answer.status }
  if (answer.status < 200 || answer.status >= 300) {
    const body = answer.body.toString('utf8')
    const shown = body.length > MAX_ERROR_TEXT ? `${body.slice(0, MAX_ERROR_TEXT)}… (${answer.body.byteLength} bytes in all)` : body
    const what = answer.status >= 500 ? 'failed' : 'refused the call'
    const text = `Upstream "${upstream}" ${what}: HTTP ${answer.status} from ${operationId}${shown === '' ? '' : `\n${shown}`}`
    return { content: [{ type: 'text', text }], isError: true, _meta: meta }
  }
  if (answer.body.byteLength === 0) return { content: [{ type: 'text', text: `HTTP ${answer.status} (no content)` }], _meta: meta }
  if (isJsonType(answer.mediaType)) {
    const text = answer.body.toString('utf8')
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return { content: [{ type: 'text', text }], _meta: meta }
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { content: [{ type: 'text', text }], _meta: meta }
    if (output !== undefined && !output(parsed)) {
      const why = describeErrors(output.errors)
      return {
        content: [{ type: 'text', text: `Upstream "${upstream}" answered ${operationId} with JSON that does not match its documented schema (${why}):\n${text.slice(0, MAX_ERROR_TEXT)}` }],
        isError: true,
        _meta: meta,
      }
    }
    return { content: [{ type: 'text', text }], structuredContent: parsed as JsonObject, _meta: meta }
  }
  if (answer.mediaType === '' || TEXTUAL.test(answer.mediaType)) return { content: [{ type: 'text', text: answer.body.toString('utf8') }], _meta: meta }
  const data = answer.body.toString('base64')
  if (answer.mediaType.startsWith('image/')) return { content: [{ type: 'image', data, mimeType: answer.mediaType }], _meta: meta }
  if (answer.mediaType.startsWith('audio/')) return { content: [{ type: 'audio', data, mimeType: answer.mediaType }], _meta: meta }
  const uri = `openapi://${upstream}/${encodeURIComponent(operationId)}`
  return { content: [{ type: 'resource', resource: { uri, mimeType: answer.mediaType, blob: data } }], _meta: meta }
}

/** A call that got no answer (or one past a bound), as an error result naming the upstream. */
export function failureResult(upstream: string, operationId: string, reason: string): JsonObject {
  return { content: [{ type: 'text', text: `Upstream "${upstream}" could not answer ${operationId}: ${reason}` }], isError: true }
}
