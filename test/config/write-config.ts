// Writes a config file into a temporary folder that the test removes at teardown.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

// Just what the helper needs of a tap Test (its full type is awkward to name).
export interface Teardown { teardown(fn: () => void): void }

/** The absolute path of a fresh `gateway.yaml` holding `text`. */
export function writeConfig(t: Teardown, text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-edge-config-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'gateway.yaml')
  writeFileSync(file, text)
  return file
}
