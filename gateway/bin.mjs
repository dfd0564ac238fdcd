#!/usr/bin/env node
// The `mcp-edge` command. Registers tsx's loader, so handler modules (TypeScript) load without a build
// step, and the hooks that let a reload load them afresh (generation-hooks.mjs), then hands over to the
// CLI: the compiled one (dist/, built by `npm pack`) in an installed package, the TypeScript sources in
// a checkout (where `mcp-edge` imports resolve to the sources too).
import { existsSync } from 'node:fs'
import { register } from 'node:module'
import { register as registerTsx } from 'tsx/esm/api'

const fromSource = existsSync(new URL('./cli.ts', import.meta.url))
if (fromSource) register('./source-condition.mjs', import.meta.url)
registerTsx()
register('./generation-hooks.mjs', import.meta.url, { data: { gatewayRoot: new URL('./', import.meta.url).href } })
const { main } = await import(fromSource ? './cli.ts' : '../dist/cli.js')
process.exitCode = await main(process.argv.slice(2))
