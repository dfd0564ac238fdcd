/**
 * jose, imported at its first use rather than at start: a gateway without JWT auth or upstream identity
 * assertions never loads its 46 modules (about 0.03 CPU-s of a start). Every user of jose is already
 * asynchronous where it needs it (verifying a token not cached, fetching keys, signing), and after the
 * first call this is a settled promise, not an import.
 */
let loading: Promise<typeof import('jose')> | undefined

/** The jose module (loaded once per process). */
export function jose(): Promise<typeof import('jose')> {
  loading ??= import('jose')
  return loading
}
