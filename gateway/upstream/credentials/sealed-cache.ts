/**
 * Upstream tokens encrypted at rest: a CredentialCache whose values are sealed with AES-256-GCM before
 * they reach the backend (Redis), so a dump of the store reads no token without the key.
 *
 *   value ─► AES-256-GCM(key of the first kid, random 96-bit IV, AAD = the cache key) ─► "v1.<kid>.<iv>.<sealed>"
 *
 * Every configured key opens values (rotation: add the new key first, keep the old one until the
 * tokens sealed with it have expired). A value that does not open (unknown kid, tampered, sealed under
 * another cache key) reads as absent: the token is simply fetched again.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { TokenEncryptionConfig } from '../../config/types.ts'
import { EdgeError } from '../../wire/errors.ts'
import type { CredentialCache } from './credential-cache.ts'

/** One key: its id (in every sealed value) and its 32 bytes. */
export interface SealingKey {
  readonly kid: string
  readonly key: Buffer
}

/** The keys of `token_encryption`, read from their files or values (base64 or hex of 32 bytes). */
export function loadSealingKeys(config: TokenEncryptionConfig): SealingKey[] {
  return config.keys.map(({ kid, file, value }) => {
    let text: string
    try {
      text = (file === undefined ? value ?? '' : readFileSync(file, 'utf8')).trim()
    } catch {
      throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `token_encryption key ${kid}: cannot read its file`)
    }
    const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64')
    if (key.length !== 32) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `token_encryption key ${kid}: must be 32 bytes, base64 or hex (openssl rand -base64 32)`)
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(kid)) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `token_encryption key id ${JSON.stringify(kid)}: letters, digits, - and _ only`)
    return { kid, key }
  })
}

export class SealedCache implements CredentialCache {
  readonly #inner: CredentialCache
  readonly #keys: readonly SealingKey[]
  readonly #byKid: ReadonlyMap<string, Buffer>

  constructor(inner: CredentialCache, keys: readonly SealingKey[]) {
    if (keys.length === 0) throw new Error('SealedCache needs a key')
    this.#inner = inner
    this.#keys = keys
    this.#byKid = new Map(keys.map((key) => [key.kid, key.key]))
  }

  async get(key: string): Promise<string | undefined> {
    const sealed = await this.#inner.get(key)
    return sealed === undefined ? undefined : this.open(key, sealed)
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.#inner.set(key, this.seal(key, value), ttlMs)
  }

  delete(key: string): Promise<void> {
    return this.#inner.delete(key)
  }

  lock(key: string, ttlMs: number): Promise<(() => Promise<void>) | undefined> {
    return this.#inner.lock(key, ttlMs)
  }

  close(): Promise<void> {
    return this.#inner.close()
  }

  /** `value` sealed under the first key, bound to `key`. */
  seal(key: string, value: string): string {
    const { kid, key: secret } = this.#keys[0]!
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', secret, iv)
    cipher.setAAD(Buffer.from(key))
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `v1.${kid}.${iv.toString('base64url')}.${body.toString('base64url')}`
  }

  /** The value sealed under `key`, or undefined when it does not open. */
  open(key: string, sealed: string): string | undefined {
    const [version, kid, iv, body] = sealed.split('.')
    const secret = kid === undefined ? undefined : this.#byKid.get(kid)
    if (version !== 'v1' || secret === undefined || iv === undefined || body === undefined) return undefined
    try {
      const bytes = Buffer.from(body, 'base64url')
      if (bytes.length < 16) return undefined
      const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(key))
      decipher.setAuthTag(bytes.subarray(bytes.length - 16))
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }
}
