/**
 * Imports an operator's module: a route's handler, phase or access module. TypeScript goes through
 * tsx's loader (registered by the CLI; no build step), a reload's generation imports it afresh, and a
 * failure is an EdgeError that names the file, so `mcp-edge check` can say what to change.
 */
import { access } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { EdgeError, type EdgeCodeName } from '../wire/errors.ts'

/**
 * Marks the modules of a reload's generation: `mcp-edge`'s module hooks (generation-hooks.mjs) carry it
 * from a handler module to the modules it imports of its own, so they load afresh too, while the
 * gateway and node_modules stay the ones already loaded (one `defineHandler`, one `ToolError`).
 */
export const GENERATION_PARAMETER = 'mcp-edge-generation'

/**
 * The default export of `file`, `what` naming it in errors (`handler module`, `rewrite phase module`).
 * `generation` > 0 loads the module afresh (a reload) instead of from the module cache.
 */
export async function loadDefaultExport(file: string, what: string, code: EdgeCodeName, generation = 0): Promise<unknown> {
  try {
    await access(file)
  } catch {
    throw new EdgeError(code, `${file}: ${what} not found`)
  }
  let module: Record<string, unknown>
  try {
    const url = pathToFileURL(file)
    if (generation > 0) url.searchParams.set(GENERATION_PARAMETER, String(generation))
    module = (await import(url.href)) as Record<string, unknown>
  } catch (error) {
    throw new EdgeError(code, `${file}: cannot load ${what}: ${(error as Error).message}`)
  }
  return module.default
}
