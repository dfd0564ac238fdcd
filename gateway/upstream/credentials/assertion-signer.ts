/**
 * The gateway's signing keys for identity assertions (`upstream_identity`), and the JWKS that publishes
 * them so an upstream verifies assertions with any JWT library:
 *
 *   keys: [{kid: k2, file: k2.pem}, {kid: k1, file: k1.pem}]   the first signs; every one is published
 *   GET <jwks_path> ─► {"keys": [{kty, crv, x, y?, kid, alg, use: "sig"}, …]}   (public parts only)
 *
 * Rotation: publish the new key second, wait for upstreams' JWKS caches to see it, move it first, and
 * drop the old one once the last assertion it signed has expired. A key is EC P-256 (ES256) or Ed25519
 * (EdDSA), as a PEM private key (PKCS#8 or SEC1).
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { JWK, JWTPayload } from 'jose'
import type { UpstreamIdentityConfig } from '../../config/types.ts'
import { jose } from '../../edge/jose-module.ts'
import { EdgeError } from '../../wire/errors.ts'

interface SigningKey {
  readonly kid: string
  readonly alg: 'ES256' | 'EdDSA'
  readonly key: KeyObject
  readonly publicKey: KeyObject
}

export class AssertionSigner {
  readonly issuer: string
  readonly jwksPath: string
  readonly #keys: readonly SigningKey[]
  #jwks: Promise<{ keys: JWK[] }> | undefined

  /** Reads the key files; throws MCP_EDGE_CONFIG_INVALID naming the key (never its contents). */
  constructor(config: UpstreamIdentityConfig) {
    this.issuer = config.issuer
    this.jwksPath = config.jwks_path
    const kids = new Set<string>()
    this.#keys = config.keys.map(({ kid, file }) => {
      if (kids.has(kid)) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `upstream_identity: key id ${kid} is given twice`)
      kids.add(kid)
      let key: KeyObject
      try {
        key = createPrivateKey(readFileSync(file))
      } catch {
        throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `upstream_identity key ${kid}: ${file} is not a readable PEM private key`)
      }
      const alg = key.asymmetricKeyType === 'ed25519' ? 'EdDSA'
        : key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? 'ES256'
        : undefined
      if (alg === undefined) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `upstream_identity key ${kid}: must be EC P-256 (ES256) or Ed25519 (EdDSA)`)
      return { kid, alg, key, publicKey: createPublicKey(key) }
    })
  }

  /** The public keys as a JWKS (made once). */
  jwks(): Promise<{ keys: JWK[] }> {
    return (this.#jwks ??= Promise.all(
      this.#keys.map(async ({ kid, alg, publicKey }) => ({ ...(await (await jose()).exportJWK(publicKey)), kid, alg, use: 'sig' })),
    ).then((keys) => ({ keys })))
  }

  /** A JWT with `claims`, signed with the first key, valid `ttlS` seconds from now. */
  async sign(claims: JWTPayload, subject: string, audience: string, ttlS: number): Promise<string> {
    const { kid, alg, key } = this.#keys[0]!
    const { SignJWT } = await jose()
    const now = Math.floor(Date.now() / 1000)
    return new SignJWT(claims)
      .setProtectedHeader({ alg, kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setSubject(subject)
      .setAudience(audience)
      .setIssuedAt(now)
      .setNotBefore(now - 5)
      .setExpirationTime(now + ttlS)
      .setJti(crypto.randomUUID())
      .sign(key)
  }
}
