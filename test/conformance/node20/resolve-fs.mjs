// Module resolution hook: the conformance bundle's `fs` becomes node:fs plus a globSync.
const FS_WITH_GLOB = new URL('./fs-with-glob.mjs', import.meta.url).href

export async function resolve(specifier, context, nextResolve) {
  const fromSuite = context.parentURL?.includes('/@modelcontextprotocol/conformance/') === true
  if (fromSuite && (specifier === 'fs' || specifier === 'node:fs')) return { url: FS_WITH_GLOB, shortCircuit: true }
  return nextResolve(specifier, context)
}
