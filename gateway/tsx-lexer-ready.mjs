// Imported before a start's (or a test's) own modules: resolves once tsx reads ES modules with
// es-module-lexer's WebAssembly build. tsx lexes every plain ES module it loads (to patch its dynamic
// imports). The WebAssembly build compiles in the background from when tsx loads, and until it is ready
// tsx lexes with the JavaScript build, several times slower. With tsx's hooks in the importing thread
// (Node 22.22.3+, 24.11.1+), a whole import graph loads without the event loop turning, so every module
// of a start went through the slow build: on Node 24 about 0.15-0.25 of a start's 1.1 CPU-s, and
// 0.2-0.5 CPU-s of each test process. Waiting for the WebAssembly build costs no CPU.
//
// tsx keeps the lexer in a chunk of its own (dist/lexer-<hash>.mjs); importing that file gives tsx's
// instance, whose `init` settles when the WebAssembly build is ready. A tsx laid out otherwise is not
// waited for. Plain JavaScript: it runs before tsx is involved.
import { readdirSync } from 'node:fs'

const dist = new URL('../../', import.meta.resolve('tsx/esm/api'))
const chunk = readdirSync(dist).find((name) => /^lexer-[\w-]+\.mjs$/.test(name))
if (chunk !== undefined) {
  const { init } = await import(new URL(chunk, dist).href)
  await init
  // tsx takes the lexer in a continuation of the same promise: let it run.
  await new Promise((resolve) => setImmediate(resolve))
}
