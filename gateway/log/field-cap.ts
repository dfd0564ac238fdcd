/**
 * How long a client-chosen text may be on a log line. A JSON-RPC method, request id, principal or
 * URL comes from the client, and a body may hold megabytes: logged whole, one request makes a
 * megabyte line (and the access line's caches would keep it). Like nginx, which never logs more of
 * a request than its header buffers hold, each such field is cut to a fixed length and marked:
 *
 *   "method": "aaaa…(+1048320 chars)"      the first LOG_FIELD_MAX characters, and how many were left out
 */

/** Characters kept of a client-chosen field (method, tool, principal, request id, era, reason). */
export const LOG_FIELD_MAX = 256
/** Characters kept of a URL (its path and query, after redaction). */
export const LOG_URL_MAX = 2048

/** `value` cut to `max` characters with a marker saying how many were left out; anything else as it is. */
export function capField(value: unknown, max = LOG_FIELD_MAX): unknown {
  if (typeof value !== 'string' || value.length <= max) return value
  return `${value.slice(0, max)}…(+${value.length - max} chars)`
}

/** capField for a text known to be a string (the access line's short path). */
export function capText(value: string, max = LOG_FIELD_MAX): string {
  return value.length <= max ? value : `${value.slice(0, max)}…(+${value.length - max} chars)`
}

/** The log fields that carry client-chosen text and the cap each gets (pino serializers). */
export const CAPPED_FIELDS: Record<string, (value: unknown) => unknown> = Object.fromEntries(
  ['method', 'tool', 'name', 'principal', 'requestId', 'era', 'reason', 'uri', 'address'].map((field) => [field, (value: unknown) => capField(value)]),
)
