/**
 * `auth: {headers: {...}}`: static headers whose values may be `file:` paths. The headers object is
 * made once and again only when a file changes, so the transports keep reusing it (no allocation per
 * exchange). Without any `file:` value the route uses FixedHeaders instead (merged once into the transport).
 */
import type { UpstreamConfig } from '../../config/types.ts'
import type { CredentialContext } from './context.ts'
import { FixedHeaders, type CredentialHeaders, type CredentialProvider, type Rejection } from './provider.ts'
import { SecretValue } from './secret-value.ts'

export class HeaderFiles implements CredentialProvider {
  readonly kind = 'headers'
  readonly perPrincipal = false
  readonly #base: Readonly<Record<string, string>>
  readonly #values: ReadonlyMap<string, SecretValue>
  #headers: CredentialHeaders

  /** The provider of `upstream.auth.headers`: FixedHeaders when no value is a file. */
  static create(upstream: UpstreamConfig, context: CredentialContext): CredentialProvider {
    const written = upstream.auth!.headers!
    if (!Object.values(written).some((value) => value.startsWith('file:'))) return new FixedHeaders({ ...upstream.headers, ...written })
    return new HeaderFiles(upstream, written, context)
  }

  private constructor(upstream: UpstreamConfig, written: Record<string, string>, context: CredentialContext) {
    this.#base = upstream.headers
    const values = new Map<string, SecretValue>()
    for (const [name, value] of Object.entries(written)) {
      values.set(name.toLowerCase(), new SecretValue(value, `upstream ${upstream.name}: auth.headers.${name}`, context.logger))
    }
    this.#values = values
    this.#headers = this.#make()
    for (const value of values.values()) if (value.fromFile) value.onChange(() => (this.#headers = this.#make()))
  }

  headers(): CredentialHeaders {
    return this.#headers
  }

  /** A 401 may be the file rotated before the watch saw it: read the files now; retry when one changed. */
  rejected(): Rejection {
    let changed = false
    for (const value of this.#values.values()) changed = value.reread() || changed
    return changed ? 'retry' : 'fail'
  }

  close(): void {
    for (const value of this.#values.values()) value.close()
  }

  #make(): CredentialHeaders {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(this.#base)) headers[name.toLowerCase()] = value
    for (const [name, value] of this.#values) headers[name] = value.value
    return Object.freeze(headers)
  }
}
