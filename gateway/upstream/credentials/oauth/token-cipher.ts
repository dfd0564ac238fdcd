/**
 * Encryption at rest for what per-user OAuth keeps in the store (tokens, PKCE verifiers, a registered
 * client's secret): AES-256-GCM, a fresh 96-bit IV per value, and the store key as additional data,
 * so a value copied under another (principal, upstream) key does not open.
 *
 *   sealed = "v1." kid "." base64url(iv) "." base64url(ciphertext ‖ tag)
 *
 * Keys come from `MCP_EDGE_TOKEN_KEYS` ("kid:key,kid:key", the first one encrypts) or from the file
 * named by `MCP_EDGE_TOKEN_KEYS_FILE` (one "kid:key" a line, the first one encrypts); a key is 32
 * bytes in base64, base64url or hex. Rotation: put the new key first and keep the old one after it
 * until the values sealed with it have expired or been rewritten.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'

export interface TokenKey {
  readonly id: string
  readonly key: Buffer
}

/** The keys are missing or malformed: the gateway refuses to start an OAuth upstream without them. */
export class TokenKeyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TokenKeyError'
  }
}

const KID = /^[A-Za-z0-9_-]{1,32}$/

/** One key from its text (base64, base64url or 64 hex digits). */
function decodeKey(text: string): Buffer {
  const trimmed = text.trim()
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  if (key.length !== 32) throw new TokenKeyError('a token key must be 32 bytes (base64, base64url or 64 hex digits)')
  return key
}

/** Keys from "kid:key" entries separated by commas or newlines (blank lines and # comments skipped). */
export function parseTokenKeys(text: string): TokenKey[] {
  const keys: TokenKey[] = []
  for (const entry of text.split(/[,\n]/)) {
    const line = entry.trim()
    if (line === '' || line.startsWith('#')) continue
    const colon = line.indexOf(':')
    const id = line.slice(0, colon)
    if (colon < 1 || !KID.test(id)) throw new TokenKeyError('each token key is "kid:key", the kid 1-32 characters of [A-Za-z0-9_-]')
    if (keys.some((known) => known.id === id)) throw new TokenKeyError(`token key id "${id}" appears twice`)
    keys.push({ id, key: decodeKey(line.slice(colon + 1)) })
  }
  if (keys.length === 0) throw new TokenKeyError('no token key given')
  return keys
}

/** The keys from the environment (`MCP_EDGE_TOKEN_KEYS`, else the file `MCP_EDGE_TOKEN_KEYS_FILE`); undefined when neither is set. */
export function tokenKeysFromEnv(env: NodeJS.ProcessEnv = process.env): TokenKey[] | undefined {
  const inline = env.MCP_EDGE_TOKEN_KEYS
  if (inline !== undefined && inline.trim() !== '') return parseTokenKeys(inline)
  const file = env.MCP_EDGE_TOKEN_KEYS_FILE
  if (file !== undefined && file !== '') {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      throw new TokenKeyError(`cannot read MCP_EDGE_TOKEN_KEYS_FILE (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    }
    return parseTokenKeys(text)
  }
  return undefined
}

export class TokenCipher {
  readonly #current: TokenKey
  readonly #byId: ReadonlyMap<string, Buffer>

  constructor(keys: readonly TokenKey[]) {
    if (keys.length === 0) throw new TokenKeyError('no token key given')
    this.#current = keys[0]!
    this.#byId = new Map(keys.map((key) => [key.id, key.key]))
  }

  /** The id of the key new values are sealed with. */
  get keyId(): string {
    return this.#current.id
  }

  /** `plain` sealed with the current key, bound to `context` (the store key it is written under). */
  seal(plain: string, context: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#current.key, iv)
    cipher.setAAD(Buffer.from(context))
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `v1.${this.#current.id}.${iv.toString('base64url')}.${body.toString('base64url')}`
  }

  /** The plain text, or undefined when the value is malformed, sealed with an unknown key, or tampered with. */
  open(sealed: string, context: string): string | undefined {
    const parts = sealed.split('.')
    if (parts.length !== 4 || parts[0] !== 'v1') return undefined
    const key = this.#byId.get(parts[1]!)
    if (key === undefined) return undefined
    const iv = Buffer.from(parts[2]!, 'base64url')
    const body = Buffer.from(parts[3]!, 'base64url')
    if (iv.length !== 12 || body.length < 16) return undefined
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv)
      decipher.setAAD(Buffer.from(context))
      decipher.setAuthTag(body.subarray(body.length - 16))
      return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }

  /** True when `sealed` was made with an older key (rewrite it with the current one). */
  isStale(sealed: string): boolean {
    return !sealed.startsWith(`v1.${this.#current.id}.`)
  }
}
