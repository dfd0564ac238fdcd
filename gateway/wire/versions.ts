/** Protocol revisions the stateful wire speaks, newest first, and version negotiation. */

export const STATEFUL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const
export const LATEST_STATEFUL_VERSION = STATEFUL_VERSIONS[0]

const supported: ReadonlySet<string> = new Set(STATEFUL_VERSIONS)

export function isSupportedVersion(version: string): boolean {
  return supported.has(version)
}

/** The version to answer an initialize with: the client's when supported, otherwise our latest. */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === 'string' && supported.has(requested) ? requested : LATEST_STATEFUL_VERSION
}
