/**
 * mcp-edge as a user's project gets it: `npm pack` (prepack compiles dist/), the tarball installed
 * in a fresh folder from the npm cache (offline), `mcp-edge init`, `tsc --noEmit` under the
 * scaffold's tsconfig and under a default `tsc --init` one, `check`, `start`, a call from the official
 * SDK client, and `mcp-edge/client` from a plain `.mjs` run by plain Node.
 *
 * The tarball is cached in node_modules/.cache/mcp-edge-package/, keyed by a digest of everything
 * packed, so a run without changes to the package skips the compile.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import t from 'tap'
import { DEFAULT_CONFIG_FILE } from '../../gateway/config/load.ts'
import { freePort } from '../fixtures/waiting.ts'
import { offlineLock } from './offline-lock.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CACHE = path.join(ROOT, 'node_modules/.cache/mcp-edge-package')
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
// A cold run compiles the package (tsc) and installs ~85 packages from the cache: minutes on a busy
// 2-core machine; a warm one, well under a minute.
t.setTimeout(300_000)

interface Outcome { code: number | null; stdout: string; stderr: string }

/** Runs a command to completion, in `cwd`, without a shell. */
async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = (await once(child, 'close')) as [number | null]
  return { code, stdout, stderr }
}

/** A digest of every file the tarball is built from. */
function packDigest(): string {
  const hash = createHash('sha256')
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const file = path.join(dir, name)
      if (statSync(file).isDirectory()) walk(file)
      else hash.update(`${path.relative(ROOT, file)}\0`).update(readFileSync(file))
    }
  }
  walk(path.join(ROOT, 'gateway'))
  walk(path.join(ROOT, 'templates'))
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md']) hash.update(readFileSync(path.join(ROOT, file)))
  return hash.digest('hex').slice(0, 16)
}

/** The packed tarball: from the cache, or `npm pack` now. */
async function tarball(): Promise<string> {
  const dir = path.join(CACHE, packDigest())
  const file = path.join(dir, `mcp-edge-${VERSION}.tgz`)
  if (existsSync(file)) return file
  await rm(CACHE, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const packed = await run('npm', ['pack', '--pack-destination', dir, '--silent'], ROOT)
  if (packed.code !== 0 || !existsSync(file)) throw new Error(`npm pack failed (${packed.code}):\n${packed.stderr}`)
  return file
}

/** A handler an `init` project might write: every argument and the result typed from the schemas. */
const TYPED_HANDLER = `import { defineHandler } from 'mcp-edge'

export default defineHandler((mcp, server) => {
  void server.register(
    mcp.tool('order', ({ quantity, priority, tags, address }) => {
      const first: string | undefined = address.lines[0]
      return { id: \`\${priority}-\${quantity * 2}-\${(tags ?? []).join(',')}-\${first ?? address.city}\`, status: priority === 'high' ? 'rushed' : 'queued' }
    }, {
      inputSchema: {
        type: 'object',
        properties: {
          quantity: { type: 'integer' },
          priority: { enum: ['low', 'high'] },
          tags: { type: 'array', items: { type: 'string' } },
          address: { type: 'object', properties: { city: { type: 'string' }, lines: { type: 'array', items: { type: 'string' } } }, required: ['city', 'lines'] },
        },
        required: ['quantity', 'priority', 'address'],
      },
      outputSchema: { type: 'object', properties: { id: { type: 'string' }, status: { enum: ['queued', 'rushed'] } }, required: ['id', 'status'] },
    }),
  )
})
`

const work = await mkdtemp(path.join(tmpdir(), 'mcp-edge-package-'))
t.teardown(() => rm(work, { recursive: true, force: true }))
const project = path.join(work, 'app')
const bin = path.join(project, 'node_modules/.bin')

t.test('the packed tarball installs offline from the npm cache', async (t) => {
  const file = await tarball()
  const integrity = `sha512-${createHash('sha512').update(await readFile(file)).digest('base64')}`
  const { manifest, lock } = await offlineLock(path.join(ROOT, 'package-lock.json'), { path: file, integrity, version: VERSION }, ['typescript', '@types/node'])
  await mkdir(project)
  await writeFile(path.join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  await writeFile(path.join(project, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`)
  const installed = await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], project)
  t.equal(installed.code, 0, 'npm ci --offline exits 0', { stderr: installed.stderr })
  const shipped = path.join(project, 'node_modules/mcp-edge')
  t.ok(existsSync(path.join(shipped, 'dist/index.js')) && existsSync(path.join(shipped, 'dist/index.d.ts')), 'compiled JavaScript and .d.ts')
  t.notOk(existsSync(path.join(shipped, 'gateway/cli.ts')), 'no TypeScript sources of the gateway')
})

t.test('init scaffolds the project; existing files are kept', async (t) => {
  const init = await run('npx', ['--offline', 'mcp-edge', 'init'], project)
  t.equal(init.code, 0, 'exit 0', { stderr: init.stderr })
  for (const file of ['config/gateway.yaml', 'handlers/hello.ts', 'tsconfig.json', 'Dockerfile', '.dockerignore']) {
    t.ok(existsSync(path.join(project, file)), file)
  }
  const pkg = JSON.parse(await readFile(path.join(project, 'package.json'), 'utf8')) as Record<string, Record<string, string> | string>
  t.equal(pkg.type, 'module')
  t.match(pkg.scripts, { start: 'mcp-edge start', check: 'mcp-edge check', typecheck: 'tsc --noEmit' })
  t.match(pkg.dependencies, { 'mcp-edge': /^file:/ }, 'the installed dependency is left as it was')
  const again = await run(process.execPath, [path.join(bin, 'mcp-edge'), 'init'], project)
  t.match(again.stdout, /kept {5}handlers\/hello\.ts \(exists\)/)
})

t.test('the scaffolded config names the installed schema on its first line, for editors', async (t) => {
  const config = path.join(project, 'config/gateway.yaml')
  const first = (await readFile(config, 'utf8')).split('\n')[0]!
  const match = /^# yaml-language-server: \$schema=(\S+)$/.exec(first)
  t.ok(match, 'the yaml-language-server line comes first', { first })
  const schema = path.resolve(path.dirname(config), match![1]!)
  t.ok(existsSync(schema), `${match![1]} resolves in the installed package`)
  t.equal(schema, createRequire(path.join(project, 'package.json')).resolve('mcp-edge/schema.json'), 'the file mcp-edge/schema.json exports')
  const shipped = JSON.parse(await readFile(schema, 'utf8')) as { $id?: string }
  t.equal(shipped.$id, 'https://mcp-edge.dev/schema/gateway-config.json')
  for (const doc of ['README.md', 'docs/reference/configuration.md', 'docs/stdio-upstreams.md']) {
    t.ok(existsSync(path.join(project, 'node_modules/mcp-edge', doc)), `${doc} is in the package (the README links into docs/)`)
  }
})

t.test('handlers type-check against the .d.ts, under the scaffold tsconfig and a default tsc --init one', async (t) => {
  // A default `tsc --init` project beside the scaffold, with the same handler and a client import.
  const plain = path.join(project, 'plain')
  await mkdir(plain)
  const init = await run(process.execPath, [path.join(bin, 'tsc'), '--init'], plain)
  t.equal(init.code, 0, 'tsc --init')
  await writeFile(path.join(plain, 'package.json'), '{ "type": "module" }\n')
  await writeFile(path.join(plain, 'hello.ts'), await readFile(path.join(project, 'handlers/hello.ts')))
  await writeFile(path.join(plain, 'client.ts'), "import { McpClient, StreamableHttpTransport } from 'mcp-edge/client'\nexport const client = new McpClient(new StreamableHttpTransport({ url: 'http://127.0.0.1:1/mcp' }))\n")
  // A typed handler (numbers, enums, arrays, nested objects, a structured result) with no cast, in both.
  await writeFile(path.join(project, 'handlers/typed.ts'), TYPED_HANDLER)
  await writeFile(path.join(plain, 'typed.ts'), TYPED_HANDLER)
  const [scaffolded, defaults] = await Promise.all([
    run(process.execPath, [path.join(bin, 'tsc'), '--noEmit'], project),
    run(process.execPath, [path.join(bin, 'tsc'), '--noEmit'], plain),
  ])
  t.equal(scaffolded.code, 0, 'scaffold tsconfig: clean', { stdout: scaffolded.stdout })
  t.equal(defaults.code, 0, 'tsc --init tsconfig: clean (no TS5097 in node_modules/mcp-edge)', { stdout: defaults.stdout })
  // The types are real, not `any` from an unresolved import: a wrong use is an error in the user's
  // file; and arguments are typed from the schema through the packed .d.ts (json-schema-to-ts
  // installed with it). Both files in one tsc run (each tsc costs about 2 CPU-s), each error held
  // to its own file and line.
  await writeFile(path.join(plain, 'wrong.ts'), "import { defineHandler } from 'mcp-edge'\nexport default defineHandler((mcp) => { const n: number = mcp.tool('x', () => 'y'); void n })\n")
  await writeFile(path.join(plain, 'misuse.ts'), "import { defineHandler } from 'mcp-edge'\nexport default defineHandler((mcp, server) => { void server.register(mcp.tool('x', ({ a }) => a.toUpperCase(), { inputSchema: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] } })) })\n")
  const misused = await run(process.execPath, [path.join(bin, 'tsc'), '--noEmit'], plain)
  t.not(misused.code, 0)
  t.match(misused.stdout, /^wrong\.ts\(2,\d+\): error TS2322: Type 'Tool' is not assignable to type 'number'/m)
  t.notMatch(misused.stdout, /node_modules/, 'no error inside the package')
  // An error is its first line and the indented lines that go on with it.
  const errors = misused.stdout.trim().split(/\n(?=\S)/)
  t.same(errors.map((error) => error.split('(')[0]).sort(), ['misuse.ts', 'wrong.ts'], 'one error in each file, none elsewhere', { stdout: misused.stdout })
  const misuse = errors.find((error) => error.startsWith('misuse.ts'))
  t.match(misuse, /^misuse\.ts\(2,\d+\): error TS2339: Property 'toUpperCase' does not exist on type 'number'\.$/, 'misuse.ts: that error only', { stdout: misused.stdout })
  await rm(plain, { recursive: true })
  await rm(path.join(project, 'handlers/typed.ts'))
})

t.test('check, start, an SDK client call, and mcp-edge/client from plain Node', async (t) => {
  const check = await run(process.execPath, [path.join(bin, 'mcp-edge'), 'check'], project)
  t.equal(check.code, 0, 'check exits 0', { stderr: check.stderr })
  t.equal(check.stdout, `ok: ${path.join(project, DEFAULT_CONFIG_FILE)} (1 route, 1 tool)\n`, 'the config in the working directory')

  const port = await freePort()
  const child = spawn(process.execPath, [path.join(bin, 'mcp-edge'), 'start'], { cwd: project, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const deadline = Date.now() + 60_000
  while (!output.includes('mcp-edge listening')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`start did not listen:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const listening = JSON.parse(output.split('\n').find((line) => line.includes('mcp-edge listening'))!) as { config: string }
  t.equal(listening.config, path.join(project, 'config/gateway.yaml'), 'the project config, named at start')

  const url = `http://127.0.0.1:${port}/mcp`
  const client = new Client({ name: 'package-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  const result = await client.callTool({ name: 'hello', arguments: { name: 'SDK' } })
  t.same(result.content, [{ type: 'text', text: 'Hello, SDK!' }], 'the project handler answers')
  await client.close()

  await writeFile(path.join(project, 'call.mjs'), [
    "import { McpClient, StreamableHttpTransport } from 'mcp-edge/client'",
    'const client = new McpClient(new StreamableHttpTransport({ url: process.argv[2] }))',
    'await client.initialize()',
    "const result = await client.callTool('hello', { name: 'plain Node' })",
    'process.stdout.write(JSON.stringify(result.content))',
    'await client.close()',
  ].join('\n'))
  const plain = await run(process.execPath, ['call.mjs', url], project)
  t.equal(plain.code, 0, 'plain node exits 0', { stderr: plain.stderr })
  t.same(JSON.parse(plain.stdout), [{ type: 'text', text: 'Hello, plain Node!' }])

  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'SIGTERM: exit 0')
})
