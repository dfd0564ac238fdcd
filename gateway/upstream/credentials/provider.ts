/**
 * The credential seam: how the gateway authenticates itself to one upstream, on behalf of the caller.
 * Every `auth:` kind of an upstream (static headers, client credentials, token exchange, identity
 * assertion, per-user OAuth) is one `CredentialProvider`; the transports ask it per exchange.
 *
 *   downstream request ─► Caller (edge: principal, scopes, verified token) ─► ProxyRoute.forward
 *        │                                                                        │ who = ctx.caller
 *        ▼                                                                        ▼
 *   UpstreamLink / StatelessUpstream ── provider.headers(who, signal) ──► Authorization … ─► upstream
 *                                  ◄── HTTP 401 + WWW-Authenticate ──────────────────────┘
 *        provider.rejected(who, challenge) ─► 'retry' (once, fresh headers) │ 'consent' │ 'fail'
 *
 * The contract, for implementers and callers alike:
 *
 * - `headers(who, signal)` returns the headers of ONE upstream exchange for `who` (the call's caller;
 *   undefined for the gateway's own traffic: health probes, a session's relay with no request). It may
 *   answer synchronously; it must, for headers known without I/O, and then return the SAME object for
 *   as long as the headers do not change, so transports reuse the headers they built (no allocation per
 *   exchange on the hot path). It may return a promise (a token to fetch); it must settle within its
 *   kind's timeout and honour `signal`. Failure is a `CredentialError` (or `ConsentRequiredError`).
 * - It never returns the caller's own access token, nor anything derived from it that the upstream
 *   could replay at the caller's authorization server: the MCP authorization spec forbids passthrough.
 *   `subjectToken(who)` (wire/caller.ts) is read only to send to the authorization server.
 * - `perPrincipal` is true when the headers depend on `who`. Then no upstream session or connection
 *   may serve two principals (no cross-user reuse of an upstream session authorised as someone else):
 *   session links are per downstream session (one principal), stateless pool links per principal,
 *   and the health probe (no principal) treats a 401/403 as "reachable".
 * - `rejected(who, challenge)` is called when the upstream answered HTTP 401 to an exchange made with
 *   this provider's headers: it drops what it cached for `who` (that principal only; for a per-upstream
 *   credential, the upstream's token) and says what the caller of the seam does next: `retry` the
 *   exchange once with fresh headers, ask for `consent` (the next `headers()` for `who` throws
 *   `ConsentRequiredError` carrying the URL), or `fail` (a `CredentialError`). A 401 never marks the
 *   upstream down for everyone: it is that principal's credential that failed, not the upstream.
 * - Nothing secret leaves a provider other than in the headers it returns: errors name the upstream
 *   and the authorization server's `error` code, never a token, secret, code or token endpoint reply.
 * - `close()` stops watchers and timers (a reload builds new providers; the old ones are closed).
 */
import type { Caller } from '../../wire/caller.ts'
import { EdgeError } from '../../wire/errors.ts'

/** The headers of one upstream exchange; never mutated once returned (transports keep a reference). */
export type CredentialHeaders = Readonly<Record<string, string>>

/** What to do after an upstream's 401 (see the contract above). */
export type Rejection = 'retry' | 'consent' | 'fail'

/** One upstream's `auth:` kind. */
export interface CredentialProvider {
  /** The `auth:` kind, for logs and errors: `headers`, `client_credentials`, `token_exchange`, … */
  readonly kind: string
  /** True when the headers depend on the caller: upstream sessions and connections are then per principal. */
  readonly perPrincipal: boolean
  /** The headers of one exchange for `who`; sync when known without I/O (the same object while unchanged). */
  headers(who: Caller | undefined, signal?: AbortSignal): CredentialHeaders | Promise<CredentialHeaders>
  /** The upstream answered 401 to `who`'s exchange (`challenge`: its WWW-Authenticate): drop the cache, say what next. */
  rejected(who: Caller | undefined, challenge: string | undefined): Rejection | Promise<Rejection>
  /** Stops file watchers and timers. */
  close(): void
}

/**
 * The caller must consent first (per-user OAuth): the call answers with a URL elicitation pointing at
 * `url`. `elicitationId` lets the gateway say when the consent completed.
 */
export class ConsentRequiredError extends EdgeError {
  readonly upstream: string
  readonly url: string
  readonly elicitationId: string
  constructor(upstream: string, url: string, elicitationId: string, message = `Upstream "${upstream}" needs your consent: open the link to sign in, then call again`) {
    super('MCP_EDGE_UPSTREAM_CONSENT_REQUIRED', message, {
      data: { upstream, elicitations: [{ mode: 'url', elicitationId, url, message }] },
    })
    this.name = 'ConsentRequiredError'
    this.upstream = upstream
    this.url = url
    this.elicitationId = elicitationId
  }
}

/**
 * The gateway could not get (or use) its credential for an upstream. The message names the upstream and,
 * when the authorization server gave one, its `error` code (RFC 6749 §5.2); never a secret or token.
 */
export class CredentialError extends EdgeError {
  readonly upstream: string
  /** The authorization server's `error` code, or a word of the gateway's own (`timeout`, `unreachable`, `invalid_response`, `rejected`, …). */
  readonly reason: string
  constructor(upstream: string, reason: string, detail: string, options: { cause?: unknown } = {}) {
    super('MCP_EDGE_UPSTREAM_CREDENTIAL_FAILED', `Upstream "${upstream}": the gateway could not authenticate to it (${reason}): ${detail}`, {
      data: { upstream, error: reason },
      cause: options.cause,
    })
    this.name = 'CredentialError'
    this.upstream = upstream
    this.reason = reason
  }
}

/** Headers that never change and depend on no one: the provider of an upstream without `auth:`. */
export class FixedHeaders implements CredentialProvider {
  readonly kind = 'headers'
  readonly perPrincipal = false
  readonly #headers: CredentialHeaders
  constructor(headers: CredentialHeaders) {
    this.#headers = Object.freeze({ ...headers })
  }

  /** The same object every time: the transports build their headers once. */
  headers(): CredentialHeaders {
    return this.#headers
  }

  rejected(): Rejection {
    return 'fail'
  }

  close(): void {}
}

/** True when `provider` needs no call per exchange (its headers can be merged into a transport's static ones). */
export function isFixed(provider: CredentialProvider): provider is FixedHeaders {
  return provider instanceof FixedHeaders
}
