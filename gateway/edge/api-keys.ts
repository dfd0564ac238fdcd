/**
 * API keys for clients that cannot run an OAuth flow (CI jobs, scripts). The gateway keeps only
 * hashes: a file lists each key's SHA-256 (hex) with its principal and scopes, so the file leaks no
 * key. A presented key is hashed and looked up; the keys are long random strings, so one fast hash
 * is enough (no key stretching), and a map lookup by hash leaks nothing about other keys' bytes.
 *
 *   keys:                                     # or the list alone
 *     - sha256: 5e884898da28047151d0e56f8dc62927…
 *       principal: ci-deploy
 *       scopes: [mcp, deploy]
 *
 * Make one with `printf %s "$KEY" | sha256sum`.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { CORE_SCHEMA, load } from 'js-yaml'
import { EdgeError } from '../wire/errors.ts'
import type { Identity } from './jwt-verifier.ts'

const SHA256_HEX = /^[0-9a-f]{64}$/

/** The API keys of a route, by hash. */
export class ApiKeys {
  readonly #byHash: ReadonlyMap<string, Identity>

  constructor(byHash: ReadonlyMap<string, Identity>) {
    this.#byHash = byHash
  }

  /** Reads a keys file; throws MCP_EDGE_CONFIG_INVALID naming the file and the entry at fault. */
  static load(file: string): ApiKeys {
    let document: unknown
    try {
      document = load(readFileSync(file, 'utf8'), { schema: CORE_SCHEMA })
    } catch (error) {
      throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `auth.api_keys ${file}: ${(error as Error).message}`)
    }
    const entries = Array.isArray(document) ? document : (document as { keys?: unknown } | null)?.keys
    if (!Array.isArray(entries)) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `auth.api_keys ${file}: expected a list of keys (or keys: [...])`)
    const byHash = new Map<string, Identity>()
    entries.forEach((entry: unknown, index) => {
      const { sha256, principal, scopes } = (entry ?? {}) as { sha256?: unknown; principal?: unknown; scopes?: unknown }
      const where = `auth.api_keys ${file}: entry ${index + 1}`
      if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256.toLowerCase())) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `${where}: sha256 must be 64 hex digits`)
      if (typeof principal !== 'string' || principal === '') throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `${where}: principal must be a non-empty string`)
      if (scopes !== undefined && !(Array.isArray(scopes) && scopes.every((scope) => typeof scope === 'string'))) {
        throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `${where}: scopes must be a list of strings`)
      }
      if (byHash.has(sha256.toLowerCase())) throw new EdgeError('MCP_EDGE_CONFIG_INVALID', `${where}: the same key is listed twice`)
      byHash.set(sha256.toLowerCase(), { principal, scopes: new Set((scopes as string[] | undefined) ?? []) })
    })
    return new ApiKeys(byHash)
  }

  /** The identity of a presented key, or undefined when it is not one of ours. */
  identify(key: string): Identity | undefined {
    return this.#byHash.get(createHash('sha256').update(key).digest('hex'))
  }
}
