#!/usr/bin/env node
// The `mcp-edge` command. Registers tsx's loader so the CLI and the handler modules (TypeScript) load
// without a build step, then hands over to cli.ts.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('./cli.ts')
process.exitCode = await main(process.argv.slice(2))
