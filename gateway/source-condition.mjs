// A module hook for running from a checkout: `import … from 'mcp-edge'` (in handlers, tests, bench)
// resolves through package.json's "mcp-edge-source" export condition to the TypeScript sources, as
// `--conditions=mcp-edge-source` would. Installed packages resolve to dist/ and never load this.
const CONDITION = 'mcp-edge-source'

/** Adds the condition to every resolution of a bare `mcp-edge` specifier. */
export async function resolve(specifier, context, next) {
  if (specifier !== 'mcp-edge' && !specifier.startsWith('mcp-edge/')) return next(specifier, context)
  return next(specifier, { ...context, conditions: [...context.conditions, CONDITION] })
}
