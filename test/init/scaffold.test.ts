// `mcp-edge init` in the folders users run it in. npm 11's `npm init -y` writes "type": "commonjs";
// left so, tsx loads handlers/hello.ts as CommonJS and `mcp-edge check` fails with "Cannot require()
// ES Module … in a cycle". A folder without code of its own is switched to "module"; a CommonJS
// project with code is kept as it is, and told what to do.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { scaffold } from '../../gateway/init/scaffold.ts'

/** What `npm init -y` writes with npm 11. */
const NPM11_INIT = { name: 'app', version: '1.0.0', description: '', main: 'index.js', scripts: { test: 'echo "Error: no test specified" && exit 1' }, keywords: [], author: '', license: 'ISC', type: 'commonjs' }

async function initIn(t: { teardown(fn: () => unknown): void }, files: Record<string, string>): Promise<{ code: number; pkg: Record<string, unknown>; stderr: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-edge-init-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text)
  let stderr = ''
  const write = process.stderr.write.bind(process.stderr)
  process.stderr.write = ((chunk: string) => ((stderr += String(chunk)), true)) as typeof process.stderr.write
  let code: number
  try {
    code = await scaffold(dir, new Writable({ write: (_chunk, _encoding, done) => done() }))
  } finally {
    process.stderr.write = write
  }
  return { code, pkg: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>, stderr }
}

t.test('after npm 11’s `npm init -y`, the project becomes an ES module one', async (t) => {
  const { code, pkg, stderr } = await initIn(t, { 'package.json': JSON.stringify(NPM11_INIT, null, 2) })
  t.equal(code, 0)
  t.equal(pkg.type, 'module', '"commonjs" in a folder without code is switched')
  t.match(stderr, /changed from "commonjs" to "module"/, 'and the change is said')
  t.match(pkg.scripts, { start: 'mcp-edge start', check: 'mcp-edge check', test: NPM11_INIT.scripts.test }, 'scripts added, the user’s kept')
  t.match(pkg.dependencies, { 'mcp-edge': /^\^/ })
})

t.test('a CommonJS project with code keeps its type and is told what to do', async (t) => {
  const { code, pkg, stderr } = await initIn(t, { 'package.json': JSON.stringify(NPM11_INIT), 'index.js': "module.exports = require('node:os')\n" })
  t.equal(code, 0)
  t.equal(pkg.type, 'commonjs', 'the user’s choice stands when code depends on it')
  t.match(stderr, /handler modules need "module"/)
})

t.test('no package.json, or one without a type: "module"', async (t) => {
  t.equal((await initIn(t, {})).pkg.type, 'module')
  const { pkg, stderr } = await initIn(t, { 'package.json': JSON.stringify({ name: 'x', version: '1.0.0' }) })
  t.equal(pkg.type, 'module')
  t.equal(stderr, '', 'nothing to warn about')
})
