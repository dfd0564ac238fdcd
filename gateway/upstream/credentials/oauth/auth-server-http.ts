/**
 * One bounded HTTP exchange with an authorization server or a protected resource's metadata: a
 * timeout on the whole exchange, a cap on the body, JSON required. Failures are `AuthServerError`s
 * whose message is safe to show a client: the kind of failure and the server's OAuth `error` code,
 * never a URL (it may carry credentials), a token, a code or the server's free text.
 */

/** Largest metadata or token response read, in bytes. */
export const MAX_AUTH_RESPONSE_BYTES = 256 * 1024

/** `missing`: the upstream's protected resource metadata could not be read (its 401 may say where it is). */
export type AuthServerFailure = 'unreachable' | 'timeout' | 'garbage' | 'refused' | 'missing'

export class AuthServerError extends Error {
  readonly failure: AuthServerFailure
  /** The OAuth `error` code the server answered with (`invalid_grant`, …), when it did. */
  readonly oauthError: string | undefined
  readonly status: number | undefined
  constructor(failure: AuthServerFailure, message: string, options: { oauthError?: string; status?: number } = {}) {
    super(message)
    this.name = 'AuthServerError'
    this.failure = failure
    this.oauthError = options.oauthError
    this.status = options.status
  }
}

export interface JsonAnswer {
  readonly status: number
  readonly body: Record<string, unknown>
}

const OAUTH_ERROR = /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/

/**
 * Sends the request and reads a JSON object back. `what` names the exchange in errors ("token
 * endpoint", "authorization server metadata"). A non-2xx answer with an OAuth error body is
 * `refused` with its `error` code; anything else unexpected is `garbage`.
 */
export async function exchangeJson(what: string, url: string, init: RequestInit, timeoutMs: number): Promise<JsonAnswer> {
  const signal = AbortSignal.timeout(timeoutMs)
  let response: Response
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal, headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) } })
  } catch (error) {
    if (signal.aborted) throw new AuthServerError('timeout', `${what}: no answer within ${timeoutMs} ms`)
    const code = ((error as { cause?: { code?: unknown } }).cause?.code)
    throw new AuthServerError('unreachable', `${what}: cannot be reached${typeof code === 'string' ? ` (${code})` : ''}`)
  }
  let text: string
  try {
    text = await readCapped(response, MAX_AUTH_RESPONSE_BYTES)
  } catch (error) {
    if (signal.aborted) throw new AuthServerError('timeout', `${what}: no complete answer within ${timeoutMs} ms`)
    throw error instanceof AuthServerError ? error : new AuthServerError('unreachable', `${what}: the answer broke off`)
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body)
  if (response.status < 200 || response.status >= 300) {
    const code = isObject ? (body as { error?: unknown }).error : undefined
    if (typeof code === 'string' && OAUTH_ERROR.test(code)) {
      throw new AuthServerError('refused', `${what}: refused (${code})`, { oauthError: code, status: response.status })
    }
    throw new AuthServerError('garbage', `${what}: answered HTTP ${response.status}`, { status: response.status })
  }
  if (!isObject) throw new AuthServerError('garbage', `${what}: the answer is not a JSON object`, { status: response.status })
  return { status: response.status, body: body as Record<string, unknown> }
}

async function readCapped(response: Response, limit: number): Promise<string> {
  if (Number(response.headers.get('content-length') ?? NaN) > limit) {
    await response.body?.cancel()
    throw new AuthServerError('garbage', `the answer is larger than ${limit} bytes`)
  }
  if (response.body === null) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > limit) throw new AuthServerError('garbage', `the answer is larger than ${limit} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** A string member of `body`, or undefined. */
export function stringMember(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}
