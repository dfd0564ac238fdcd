/**
 * The default secret set of the built-in filter's `redact: true`: credentials that show up in tool
 * output by accident (a file read, an env dump, a stack of a failed HTTP call). Each is specific
 * enough that ordinary text does not match it. Documented in docs/phases.md.
 */
export const DEFAULT_SECRET_PATTERNS: readonly string[] = [
  // AWS access key ids (long-term AKIA, temporary ASIA).
  '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b',
  // PEM private key blocks, whole.
  '-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----',
  // GitHub tokens (personal, OAuth, user-to-server, server-to-server, refresh; fine-grained).
  '\\bgh[pousr]_[A-Za-z0-9]{36,255}\\b',
  '\\bgithub_pat_[A-Za-z0-9_]{22,255}\\b',
  // Bearer credentials in a header line or a message.
  '\\b[Bb]earer\\s+[A-Za-z0-9\\-._~+/]{16,}=*',
  // Slack tokens.
  '\\bxox[abprs]-[A-Za-z0-9-]{10,}\\b',
]
