/**
 * What the gateway's logs never carry: credentials in headers, token-like query parameters, and
 * session ids (a session id is a bearer credential: whoever has it speaks in that session). Applied
 * by the logger (logger.ts) to every line, whoever wrote it:
 *
 *   { sessionId }       ─► a short hash (the same id always gives the same hash, so lines still join)
 *   { url }             ─► path kept; the values of token-like query parameters → [Redacted]
 *   { …headers[name] }  ─► [Redacted] for the configured header names (pino `redact` paths)
 */
import { createHash } from 'node:crypto'
import type { LogConfig } from '../config/types.ts'

/** What replaces a redacted value. */
export const CENSOR = '[Redacted]'

/** Session ids remembered with their hash: the access line hashes on every request. */
const HASH_CACHE_SIZE = 4096
const hashes = new Map<string, string>()

/** A session id as logged: 12 hex digits of its SHA-256 (48 bits; the id itself cannot be recovered). */
export function sessionHash(id: unknown): unknown {
  if (typeof id !== 'string') return id
  let hash = hashes.get(id)
  if (hash === undefined) {
    hash = createHash('sha256').update(id).digest('hex').slice(0, 12)
    if (hashes.size >= HASH_CACHE_SIZE) hashes.clear()
    hashes.set(id, hash)
  }
  return hash
}

/** A URL as logged: the values of query parameters whose names contain one of `names` are redacted. */
export function redactUrl(url: unknown, names: readonly string[]): unknown {
  if (typeof url !== 'string') return url
  const at = url.indexOf('?')
  if (at < 0) return url
  const query = url.slice(at + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=')
    if (eq < 0) return pair
    const name = safeDecode(pair.slice(0, eq)).toLowerCase()
    return names.some((word) => name.includes(word)) ? `${pair.slice(0, eq)}=${CENSOR}` : pair
  })
  return `${url.slice(0, at)}?${query.join('&')}`
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    return text
  }
}

/** pino `redact` paths for the configured headers, wherever a line carries headers, plus the extra paths. */
export function redactPaths(redact: LogConfig['redact']): string[] {
  const paths: string[] = []
  for (const name of redact.headers) {
    const key = `[${JSON.stringify(name)}]`
    paths.push(`headers${key}`, `req.headers${key}`, `request.headers${key}`, `res.headers${key}`)
  }
  return [...paths, ...redact.paths]
}
