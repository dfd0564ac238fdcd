/**
 * `npm run test:quick` (package.json) is the edit loop's suite: unit and contract tests that start
 * no process of their own. This keeps the list honest: every file it names exists, and neither it
 * nor a test helper it imports starts a child process, Redis, nginx, a browser, an upstream server
 * or a gateway process (those belong to `npm test` alone).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const script = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['test:quick']!

/** What the shell makes of the script's arguments (a `*` in a file name, as sh expands it). */
function expand(pattern: string): string[] {
  if (!pattern.includes('*')) return [pattern]
  const dir = path.posix.dirname(pattern)
  const name = new RegExp(`^${path.posix.basename(pattern).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`)
  return readdirSync(path.join(ROOT, dir)).filter((file) => name.test(file)).sort().map((file) => `${dir}/${file}`)
}

/** Words that mean a test starts something outside its own process. */
const STARTS_A_PROCESS = /node:child_process|\bspawn\(|\bfork\(|execFile|gateway-process|redis-server|startRedis|nginx|chromium|playwright|StdioTransport|server-everything|everything-server|stdio-harness|oidc-provider/

/** The file and the test helpers it imports (relative imports under test/, one level deep is enough for these). */
function withHelpers(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8')
  const helpers = [...text.matchAll(/from '(\.{1,2}\/[^']+\.ts)'/g)]
    .map((match) => path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1]!)))
    .filter((helper) => helper.startsWith('test/') && existsSync(path.join(ROOT, helper)))
  // This file names those words to look for them.
  return [file, ...helpers].filter((source) => source !== 'test/architecture/quick-set.test.ts')
}

t.match(script, /^tap /, 'test:quick runs tap')
const files = script.replace(/^tap /, '').split(/\s+/).flatMap(expand)
t.ok(files.length >= 40, `${files.length} files in the quick set`)
for (const file of files) {
  t.test(file, async (t) => {
    t.ok(existsSync(path.join(ROOT, file)), 'exists')
    t.ok(file.endsWith('.test.ts'), 'is a test file')
    for (const source of withHelpers(file)) {
      const found = STARTS_A_PROCESS.exec(readFileSync(path.join(ROOT, source), 'utf8'))
      t.notOk(found, `${source} starts no process of its own`, { found: found?.[0] })
    }
  })
}
