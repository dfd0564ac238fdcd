// The type check, once per `npm test`: test files run through tsx, which strips types without checking
// them, so this is where a type error in gateway/, handlers/, test/, bench/ or templates/ fails the
// suite (`npm run typecheck` is the same command). One tsc process for the whole project costs far
// less than checking each test file in its own process.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc')

t.test('tsc --noEmit finds no type error in the project', async (t) => {
  const child = spawn(process.execPath, [TSC, '--noEmit', '--pretty', 'false', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', resolve)
  })
  t.equal(code, 0, 'tsc exits 0', { diagnostics: output.trim().split('\n').slice(0, 40) })
})
