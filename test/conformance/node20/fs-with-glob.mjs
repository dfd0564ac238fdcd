// node:fs as the conformance bundle expects it on Node 22. Only its `tier-check` command globs, and
// the tests never run that command, so globSync refuses rather than half-implementing the pattern syntax.
import fs from 'node:fs'

export * from 'node:fs'
export default fs

export function globSync(pattern) {
  throw new Error(`fs.globSync(${JSON.stringify(pattern)}) needs Node 22; mcp-edge's tests do not run tier-check`)
}
