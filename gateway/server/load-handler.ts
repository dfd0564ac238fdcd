/**
 * Loads a route's handler module (TypeScript through tsx's loader, registered by the CLI; no build
 * step) and checks that it exports a handler. Failures name the file and what to change.
 */
import { access } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { EdgeError } from '../wire/errors.ts'
import { defineHandler, isHandler, type Handler } from '../registry/define-handler.ts'

/** A route without a handler module (a pure proxy route) registers nothing of its own. */
const NO_COMPONENTS = defineHandler(() => undefined)

/**
 * Marks the modules of a reload's generation: `mcp-edge`'s module hooks (generation-hooks.mjs) carry it
 * from a handler module to the modules it imports of its own, so they load afresh too, while the
 * gateway and node_modules stay the ones already loaded (one `defineHandler`, one `ToolError`).
 */
export const GENERATION_PARAMETER = 'mcp-edge-generation'

/**
 * The module's handler: its default export made by `defineHandler`, or a plain setup function.
 * `generation` > 0 loads the module afresh (a reload) instead of from the module cache.
 */
export async function loadHandler(file: string | undefined, generation = 0): Promise<Handler> {
  if (file === undefined) return NO_COMPONENTS
  try {
    await access(file)
  } catch {
    throw new EdgeError('MCP_EDGE_HANDLER_INVALID', `${file}: handler module not found`)
  }
  let module: Record<string, unknown>
  try {
    const url = pathToFileURL(file)
    if (generation > 0) url.searchParams.set(GENERATION_PARAMETER, String(generation))
    module = (await import(url.href)) as Record<string, unknown>
  } catch (error) {
    throw new EdgeError('MCP_EDGE_HANDLER_INVALID', `${file}: cannot load handler module: ${(error as Error).message}`)
  }
  const exported = module.default
  if (isHandler(exported)) return exported
  if (typeof exported === 'function') return defineHandler(exported as Handler['setup'])
  const found = exported === undefined ? 'has no default export' : `its default export (${typeof exported}) is not a handler`
  throw new EdgeError(
    'MCP_EDGE_HANDLER_INVALID',
    `${file}: ${found}; write \`export default defineHandler((mcp, server) => { ... })\``,
  )
}
