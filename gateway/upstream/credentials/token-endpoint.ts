/**
 * One request to an OAuth token endpoint (RFC 6749 §3.2), for the kinds that get a token of their own:
 * a form POST with the client authenticated by HTTP Basic (client_secret_basic), bounded in time and in
 * the size of the answer. Every failure is a CredentialError naming the upstream and a reason a
 * client may read: the authorization server's `error` code (RFC 6749 §5.2), or `timeout`,
 * `unreachable`, `invalid_response`. Neither the secret, the tokens sent, nor the answer's text
 * ever appear in it.
 */
import { CredentialError } from './provider.ts'

/** What a token endpoint answered, checked. */
export interface IssuedToken {
  readonly accessToken: string
  /** `Bearer` unless the server says otherwise (`DPoP` is not supported: refused as invalid_response). */
  readonly tokenType: string
  /** Milliseconds since the epoch when it expires (an hour when the server does not say). */
  readonly expiresAt: number
}

export interface TokenRequest {
  readonly upstream: string
  readonly tokenUrl: string
  readonly clientId: string
  readonly clientSecret: string
  /** The form besides the client's authentication. */
  readonly form: Readonly<Record<string, string | undefined>>
  readonly timeoutMs: number
  readonly signal?: AbortSignal | undefined
}

/** Largest answer read from a token endpoint. */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024
const DEFAULT_LIFETIME_MS = 3_600_000
/** RFC 6749 §5.2 `error` values are printable ASCII; anything else is not echoed. */
const ERROR_CODE = /^[A-Za-z0-9_.:-]{1,64}$/

/** RFC 6749 §2.3.1: the id and secret form-urlencoded, then Basic. */
function basic(id: string, secret: string): string {
  const encode = (text: string): string => encodeURIComponent(text).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`
}

/** Asks the token endpoint; resolves with the token or rejects with a CredentialError. */
export async function requestToken(request: TokenRequest): Promise<IssuedToken> {
  const { upstream, timeoutMs } = request
  const body = new URLSearchParams()
  for (const [name, value] of Object.entries(request.form)) if (value !== undefined) body.set(name, value)
  const timeout = AbortSignal.timeout(timeoutMs)
  const signal = request.signal === undefined ? timeout : AbortSignal.any([request.signal, timeout])
  let text: string
  let status: number
  try {
    const response = await fetch(request.tokenUrl, {
      method: 'POST',
      headers: { authorization: basic(request.clientId, request.clientSecret), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      signal,
      redirect: 'error',
    })
    status = response.status
    text = await bounded(response)
  } catch (error) {
    if (timeout.aborted) throw new CredentialError(upstream, 'timeout', `the authorization server did not answer within ${timeoutMs} ms`)
    if (error === OVERSIZE) throw new CredentialError(upstream, 'invalid_response', `the authorization server's answer is over ${MAX_TOKEN_RESPONSE_BYTES} bytes`)
    if (request.signal?.aborted === true) throw new CredentialError(upstream, 'cancelled', 'the request was cancelled while its token was asked for')
    throw new CredentialError(upstream, 'unreachable', 'the authorization server cannot be reached')
  }
  let answer: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SyntaxError('not an object')
    answer = parsed as Record<string, unknown>
  } catch {
    throw new CredentialError(upstream, 'invalid_response', `the authorization server answered HTTP ${status} with no JSON object`)
  }
  if (status < 200 || status >= 300 || answer.error !== undefined) {
    const code = typeof answer.error === 'string' && ERROR_CODE.test(answer.error) ? answer.error : 'invalid_response'
    throw new CredentialError(upstream, code, `the authorization server refused the token request (HTTP ${status})`)
  }
  const accessToken = answer.access_token
  const tokenType = answer.token_type ?? 'Bearer'
  if (typeof accessToken !== 'string' || accessToken === '' || /[\r\n]/.test(accessToken) || typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer') {
    throw new CredentialError(upstream, 'invalid_response', 'the authorization server answered without a usable Bearer access_token')
  }
  const expiresIn = answer.expires_in
  const lifetimeMs = typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : DEFAULT_LIFETIME_MS
  return { accessToken, tokenType: 'Bearer', expiresAt: Date.now() + lifetimeMs }
}

const OVERSIZE = new Error('oversize')

/** The body as text, refused past MAX_TOKEN_RESPONSE_BYTES. */
async function bounded(response: Response): Promise<string> {
  if (response.body === null) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > MAX_TOKEN_RESPONSE_BYTES) {
      await response.body.cancel().catch(() => undefined)
      throw OVERSIZE
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
