// A module hook for running from a checkout: `import … from 'mcp-edge'` (in handlers, tests, bench)
// resolves through package.json's "mcp-edge-source" export condition to the TypeScript sources, as
// `--conditions=mcp-edge-source` would. Installed packages resolve to dist/ and never load this.
const CONDITION = 'mcp-edge-source'

/** The context to resolve `specifier` in: the condition added for a bare `mcp-edge` specifier. */
function withCondition(specifier, context) {
  if (specifier !== 'mcp-edge' && !specifier.startsWith('mcp-edge/')) return context
  return { ...context, conditions: [...context.conditions, CONDITION] }
}

/** For `module.register` (hooks on Node's loader thread). */
export async function resolve(specifier, context, next) {
  return next(specifier, withCondition(specifier, context))
}

/** For `module.registerHooks` (hooks in the thread that imports, where Node has them). */
export function resolveSync(specifier, context, next) {
  return next(specifier, withCondition(specifier, context))
}
