// Module hooks (node:module register) that give a reload a fresh copy of the user's handler code: a
// module loaded as `…/handler.ts?mcp-edge-generation=N` passes the same mark to the modules it imports
// of its own, so they load afresh too. The gateway's modules and node_modules keep no mark, so every
// generation shares one `defineHandler`, one `ToolError`, one client: what the gateway checks with
// instanceof stays true. Plain JavaScript: hooks run on Node's loader thread, before tsx is involved.
const PARAMETER = 'mcp-edge-generation'
let gatewayRoot = ''

/** `data.gatewayRoot`: the file: URL of the gateway's folder, whose modules are never re-loaded. */
export function initialize(data) {
  gatewayRoot = data?.gatewayRoot ?? ''
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  const parent = context.parentURL
  if (parent === undefined || !parent.includes(PARAMETER)) return resolved
  if (!resolved.url.startsWith('file:') || resolved.url.includes('/node_modules/') || (gatewayRoot !== '' && resolved.url.startsWith(gatewayRoot))) return resolved
  const generation = new URL(parent).searchParams.get(PARAMETER)
  if (generation === null) return resolved
  const url = new URL(resolved.url)
  url.searchParams.set(PARAMETER, generation)
  return { ...resolved, url: url.href }
}
