/**
 * Loads a route's handler module (TypeScript through tsx's loader, registered by the CLI; no build
 * step) and checks that it exports a handler. Failures name the file and what to change.
 */
import { EdgeError } from '../wire/errors.ts'
import { loadDefaultExport } from './load-module.ts'
import { defineHandler, isHandler, type Handler } from '../registry/define-handler.ts'

/** A route without a handler module (a pure proxy route) registers nothing of its own. */
const NO_COMPONENTS = defineHandler(() => undefined)

/**
 * The module's handler: its default export made by `defineHandler`, or a plain setup function.
 * `generation` > 0 loads the module afresh (a reload) instead of from the module cache.
 */
export async function loadHandler(file: string | undefined, generation = 0): Promise<Handler> {
  if (file === undefined) return NO_COMPONENTS
  const exported = await loadDefaultExport(file, 'handler module', 'MCP_EDGE_HANDLER_INVALID', generation)
  if (isHandler(exported)) return exported
  if (typeof exported === 'function') return defineHandler(exported as Handler['setup'])
  const found = exported === undefined ? 'has no default export' : `its default export (${typeof exported}) is not a handler`
  throw new EdgeError(
    'MCP_EDGE_HANDLER_INVALID',
    `${file}: ${found}; write \`export default defineHandler((mcp, server) => { ... })\``,
  )
}
