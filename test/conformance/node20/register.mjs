// Preloaded (`node --import`) before the conformance CLI on Node 20: its bundle imports `globSync`
// from 'fs', which only Node 22 exports. On Node 22 and later this does nothing.
import fs from 'node:fs'
import { register } from 'node:module'

if (typeof fs.globSync !== 'function') register('./resolve-fs.mjs', import.meta.url)
