// Module hooks that give a reload a fresh copy of the user's handler code: a module loaded as
// `…/handler.ts?mcp-edge-generation=N` passes the same mark to the modules it imports of its own, so
// they load afresh too. The gateway's modules and node_modules keep no mark, so every generation shares
// one `defineHandler`, one `ToolError`, one client: what the gateway checks with instanceof stays true.
// Plain JavaScript: the hooks run before tsx is involved. bin.mjs registers them in the importing thread
// (`module.registerHooks`) where Node has it, else on Node's loader thread (`module.register`).
const PARAMETER = 'mcp-edge-generation'
let gatewayRoot = ''

/** `data.gatewayRoot`: the file: URL of the gateway's folder, whose modules are never re-loaded. */
export function initialize(data) {
  gatewayRoot = data?.gatewayRoot ?? ''
}

/** `resolved`, marked with its importer's generation where it is the user's own module. */
function marked(resolved, parent) {
  if (parent === undefined || !parent.includes(PARAMETER)) return resolved
  if (!resolved.url.startsWith('file:') || resolved.url.includes('/node_modules/') || (gatewayRoot !== '' && resolved.url.startsWith(gatewayRoot))) return resolved
  const generation = new URL(parent).searchParams.get(PARAMETER)
  if (generation === null) return resolved
  const url = new URL(resolved.url)
  url.searchParams.set(PARAMETER, generation)
  return { ...resolved, url: url.href }
}

export async function resolve(specifier, context, nextResolve) {
  return marked(await nextResolve(specifier, context), context.parentURL)
}

export function resolveSync(specifier, context, nextResolve) {
  return marked(nextResolve(specifier, context), context.parentURL)
}
