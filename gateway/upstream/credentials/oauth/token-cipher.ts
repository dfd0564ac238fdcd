/**
 * Encryption at rest for what per-user OAuth keeps in the store (tokens, PKCE verifiers, a registered
 * client's secret): AES-256-GCM, a fresh 96-bit IV per value, and the store key as additional data,
 * so a value copied under another (principal, upstream) key does not open.
 *
 *   sealed = "v1." kid "." base64url(iv) "." base64url(ciphertext ‖ tag)
 *
 * The keys are the gateway's `token_encryption.keys` (the same as the credential cache's): the first
 * one seals, every one opens. Rotation: put the new key first and keep the old one after it until the
 * values sealed with it have expired or been rewritten. Same format as sealed-cache.ts.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

import type { SealingKey } from '../sealed-cache.ts'

export class TokenCipher {
  readonly #current: SealingKey
  readonly #byId: ReadonlyMap<string, Buffer>

  constructor(keys: readonly SealingKey[]) {
    if (keys.length === 0) throw new Error('TokenCipher needs a key')
    this.#current = keys[0]!
    this.#byId = new Map(keys.map((key) => [key.kid, key.key]))
  }

  /** The id of the key new values are sealed with. */
  get keyId(): string {
    return this.#current.kid
  }

  /** `plain` sealed with the current key, bound to `context` (the store key it is written under). */
  seal(plain: string, context: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#current.key, iv)
    cipher.setAAD(Buffer.from(context))
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `v1.${this.#current.kid}.${iv.toString('base64url')}.${body.toString('base64url')}`
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
    return !sealed.startsWith(`v1.${this.#current.kid}.`)
  }
}
