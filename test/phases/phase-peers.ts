/**
 * What the phase tests share beside test/e2e/harness.ts (the gateway and the SDK client): a tool
 * result's text, and `mcp-edge check` run as a user runs it, on a config file.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The text of a tool result's content blocks, one a line. */
export const text = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content.map((c) => c.text).join('\n'))

/** `mcp-edge check --config <file>`: its exit code and what it wrote to stderr. */
export async function checkConfig(file: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'gateway/bin.mjs'), 'check', '--config', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = (await once(child, 'close')) as [number | null]
  return { code, stderr }
}
