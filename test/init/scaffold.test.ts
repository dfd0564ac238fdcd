// `mcp-edge init` in the folders users run it in. npm 11's `npm init -y` writes "type": "commonjs";
// left so, tsx loads handlers/hello.ts as CommonJS and `mcp-edge check` fails with "Cannot require()
// ES Module … in a cycle". A folder without code of its own is switched to "module"; a CommonJS
// project with code is kept as it is, and told what to do.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { load as parseYaml } from 'js-yaml'
import t from 'tap'
import { scaffold } from '../../gateway/init/scaffold.ts'
import { contextFiles, matching, readDockerfile, readIgnore } from '../fixtures/docker-context.ts'

/** What `npm init -y` writes with npm 11. */
const NPM11_INIT = { name: 'app', version: '1.0.0', description: '', main: 'index.js', scripts: { test: 'echo "Error: no test specified" && exit 1' }, keywords: [], author: '', license: 'ISC', type: 'commonjs' }

async function initIn(t: { teardown(fn: () => unknown): void }, files: Record<string, string>, at?: string): Promise<{ code: number; pkg: Record<string, unknown>; stderr: string; dir: string }> {
  const dir = at ?? mkdtempSync(path.join(tmpdir(), 'mcp-edge-init-'))
  if (at === undefined) t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(dir, { recursive: true })
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
  return { code, pkg: JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>, stderr, dir }
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

t.test('mcp-edge installed from a tarball outside the project: init brings it into the Docker build context', async (t) => {
  const parent = mkdtempSync(path.join(tmpdir(), 'mcp-edge-init-tarball-'))
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  // What `npm install ../mcp-edge-0.1.0.tgz` leaves in package.json.
  writeFileSync(path.join(parent, 'mcp-edge-0.1.0.tgz'), 'the packed package')
  const manifest = { name: 'app', version: '1.0.0', type: 'module', dependencies: { 'mcp-edge': 'file:../mcp-edge-0.1.0.tgz' } }
  const { code, pkg, dir } = await initIn(t, { 'package.json': JSON.stringify(manifest) }, path.join(parent, 'app'))
  t.equal(code, 0)
  t.match(pkg.dependencies, { 'mcp-edge': 'file:mcp-edge-0.1.0.tgz' }, 'the dependency points at the copy')
  t.equal(readFileSync(path.join(dir, 'mcp-edge-0.1.0.tgz'), 'utf8'), 'the packed package', 'the tarball is copied in')
  // The image's `npm install` resolves `file:mcp-edge-0.1.0.tgz` in /app: the Dockerfile copies it
  // there (with package.json) before that step, and .dockerignore does not leave it out.
  const { files } = contextFiles(dir, readIgnore(path.join(dir, '.dockerignore')))
  const { copies } = readDockerfile(path.join(dir, 'Dockerfile'))
  const install = copies.find((copy) => copy.sources.includes('package.json'))!
  t.same(install.sources.flatMap((source) => matching(source, files)).sort(), ['mcp-edge-0.1.0.tgz', 'package.json'], 'copied beside package.json')
  t.equal(install.destination, './')
  for (const source of copies.flatMap((copy) => copy.sources)) t.ok(matching(source, files).length > 0 || source.endsWith('*'), `COPY ${source}: in the context`)
  const again = await initIn(t, {}, dir)
  t.match(again.pkg.dependencies, { 'mcp-edge': 'file:mcp-edge-0.1.0.tgz' }, 'a second init changes nothing')
})

t.test('mcp-edge linked from a folder outside the project: init says how to make the image build', async (t) => {
  const parent = mkdtempSync(path.join(tmpdir(), 'mcp-edge-init-folder-'))
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  mkdirSync(path.join(parent, 'mcp-edge'))
  const manifest = { name: 'app', version: '1.0.0', type: 'module', dependencies: { 'mcp-edge': 'file:../mcp-edge' } }
  const { code, pkg, stderr, dir } = await initIn(t, { 'package.json': JSON.stringify(manifest) }, path.join(parent, 'app'))
  t.equal(code, 0)
  t.match(pkg.dependencies, { 'mcp-edge': 'file:../mcp-edge' }, 'left as it is')
  t.match(stderr, /a Docker build cannot see it\. `npm pack` it into this folder/)
  t.notOk(existsSync(path.join(dir, 'mcp-edge')), 'nothing copied')
})

t.test('the scaffolded config names the schema on its first line; the path resolves once mcp-edge is installed', async (t) => {
  const { code, dir } = await initIn(t, {})
  t.equal(code, 0)
  const config = path.join(dir, 'config/gateway.yaml')
  const text = readFileSync(config, 'utf8')
  const match = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text)
  t.ok(match, 'the yaml-language-server line is the first line')
  // What `npm install` makes of the dependency: the package in node_modules/mcp-edge (here, this checkout).
  const root = fileURLToPath(new URL('../..', import.meta.url))
  mkdirSync(path.join(dir, 'node_modules'))
  symlinkSync(root, path.join(dir, 'node_modules/mcp-edge'), 'dir')
  const schema = path.resolve(path.dirname(config), match![1]!)
  t.ok(existsSync(schema), `${match![1]} resolves from config/`)
  t.same(JSON.parse(readFileSync(schema, 'utf8')), JSON.parse(readFileSync(path.join(root, 'gateway/config/schema.json'), 'utf8')), 'to the gateway\'s schema')
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { files: string[]; exports: Record<string, unknown> }
  t.equal(pkg.exports['./schema.json'], `./${path.relative(path.join(dir, 'node_modules/mcp-edge'), schema)}`, 'the same file the package exports as mcp-edge/schema.json')
  t.ok(pkg.files.includes(path.relative(path.join(dir, 'node_modules/mcp-edge'), schema)), 'and ships')
  t.ok(parseYaml(text), 'the config still parses')
})
