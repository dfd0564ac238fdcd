/**
 * The two ways per-user OAuth stops a call: the principal must consent first (the URL to open), or
 * the credential cannot be had at all (the authorization server down, slow, answering garbage, or
 * refusing). Both name the upstream; neither carries a token, a code or a secret.
 */

/** The principal has no usable token for the upstream: the user must open `url` and consent. */
export class ConsentRequiredError extends Error {
  readonly upstream: string
  /** The authorization URL (it carries the state and the PKCE challenge, never a secret). */
  readonly url: string
  /** Stable for this consent: the URL elicitation's id and the stateless round's input key. */
  readonly elicitationId: string
  constructor(upstream: string, url: string, elicitationId: string) {
    super(`Authorization is needed for the upstream "${upstream}": open the link to sign in, then try again`)
    this.name = 'ConsentRequiredError'
    this.upstream = upstream
    this.url = url
    this.elicitationId = elicitationId
  }
}

/** No credential can be had for the upstream right now; `message` is safe to show a client. */
export class CredentialFailedError extends Error {
  readonly upstream: string
  constructor(upstream: string, reason: string) {
    super(`Credentials for the upstream "${upstream}" failed: ${reason}`)
    this.name = 'CredentialFailedError'
    this.upstream = upstream
  }
}
