#!/usr/bin/env node
// The `mcp-edge` command. Registers tsx's loader, so handler modules (TypeScript) load without a build
// step, and the hooks that let a reload load them afresh (generation-hooks.mjs), then hands over to the
// CLI: the compiled one (dist/, built by `npm pack`) in an installed package, the TypeScript sources in
// a checkout (where `mcp-edge` imports resolve to the sources too).
//
// Where tsx registers its hooks in this thread (`module.registerHooks`: tsx 4.23 does on Node 22.22.3,
// 24.11.1, 25.1 and later), ours run there too, so the whole chain is on one side: one hook registered
// with `module.register` starts Node's loader thread and sends every later import and require there and
// back (on Node 24 that cost a gateway's start about 0.4 s of its 1.3 s of CPU).
import { existsSync } from 'node:fs'
import module from 'node:module'
import { register as registerTsx } from 'tsx/esm/api'
import * as generations from './generation-hooks.mjs'

const fromSource = existsSync(new URL('./cli.ts', import.meta.url))
const gatewayRoot = new URL('./', import.meta.url).href
/** Node versions whose tsx hooks are in-thread (tsx's own test, kept in step with the tsx we depend on). */
const IN_THREAD_FROM = { 22: [22, 3], 24: [11, 1], 25: [1, 0] }
function tsxInThread() {
  if (typeof module.registerHooks !== 'function') return false
  const [major, minor, patch] = process.versions.node.split('.').map(Number)
  const from = IN_THREAD_FROM[major]
  if (from === undefined) return major > 25
  return minor > from[0] || (minor === from[0] && patch >= from[1])
}
const inThread = tsxInThread()
if (fromSource) {
  if (inThread) module.registerHooks({ resolve: (await import('./source-condition.mjs')).resolveSync })
  else module.register('./source-condition.mjs', import.meta.url)
}
registerTsx()
if (inThread) {
  generations.initialize({ gatewayRoot })
  module.registerHooks({ resolve: generations.resolveSync })
} else {
  module.register('./generation-hooks.mjs', import.meta.url, { data: { gatewayRoot } })
}
// tsx's fast lexer first: see tsx-lexer-ready.mjs.
await import('./tsx-lexer-ready.mjs')
const { main } = await import(fromSource ? './cli.ts' : '../dist/cli.js')
process.exitCode = await main(process.argv.slice(2))
