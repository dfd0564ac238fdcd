/**
 * What the phase tests share beside test/e2e/harness.ts (the gateway and the SDK client): a tool
 * result's text, and `mcp-edge check` run as a user runs it, on a config file.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile } from 'node:fs/promises'
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

/** One route of a gateway.yaml (a handler route named for its location), `extra` lines under it. */
export function routeYaml(location: string, handler: string, ...extra: string[]): string[] {
  return [`  - location: ${location}`, `    server: { name: ${location.slice(1)}, version: 1.0.0 }`, `    handler: ${JSON.stringify(handler)}`, ...extra.map((line) => `    ${line}`)]
}

/** Writes `routes` (routeYaml's) as the config `file` and runs `mcp-edge check` on it. */
export async function checkRoutes(file: string, ...routes: string[][]): Promise<{ code: number | null; stderr: string }> {
  await writeFile(file, ['routes:', ...routes.flat(), ''].join('\n'))
  return checkConfig(file)
}

/** A proxy route `/everything` in front of server-everything on `port`, its names unprefixed; `phases` keys laid over. */
export function everythingRoute(port: number, phases: object): object {
  return {
    location: '/everything',
    server: { name: 'proxy', version: '1.0.0' },
    upstreams: [{ name: 'everything', url: `http://127.0.0.1:${port}/mcp`, timeout: 20 }],
    prefix: 'never',
    ...phases,
  }
}
