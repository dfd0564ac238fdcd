/**
 * The `mcp-edge` command as a user runs it: `node gateway/bin.mjs …` (and once `npm start -- …`) in a
 * child process from the repository root, judged by exit code, stdout, stderr and, for `start`, by
 * talking HTTP to it on loopback. Broken handler modules live in test/fixtures/broken-handlers/; the
 * configs naming them are written to a temp folder with absolute handler paths.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { DEFAULT_CONFIG_FILE, loadConfig } from '../../gateway/config/load.ts'
import { freePort } from '../fixtures/waiting.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const BIN = join(ROOT, 'gateway/bin.mjs')
const ECHO = join(ROOT, 'handlers/echo.ts')
const broken = (name: string): string => join(ROOT, 'test/fixtures/broken-handlers', `${name}.ts`)

// About twenty CLI processes, each loading TypeScript through tsx (slower still under coverage).
t.setTimeout(180_000)

// The shipped config, read here too: `start` is probed at its route, and this process covers gateway
// code of its own (tap fails a run that generates no coverage; the CLI runs in child processes).
const SHIPPED = await loadConfig(DEFAULT_CONFIG_FILE)
const SHIPPED_LOCATION = SHIPPED.routes[0]!.location

const tmp = await mkdtemp(join(tmpdir(), 'mcp-edge-cli-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))

/** Writes a YAML config into the temp folder and returns its absolute path. */
async function config(name: string, yaml: string): Promise<string> {
  const file = join(tmp, `${name}.yaml`)
  await writeFile(file, yaml)
  return file
}

/** One route's YAML, as a `routes:` item. */
const route = (location: string, handler: string): string =>
  `  - location: ${location}\n    handler: ${JSON.stringify(handler)}\n    server: { name: cli-test, version: 1.0.0 }\n`

interface Outcome { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Runs the CLI to completion (killed after `timeoutMs`). */
async function run(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000, cwd = ROOT): Promise<Outcome> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null]
  clearTimeout(timer)
  return { code, signal, stdout, stderr }
}

interface Teardown { teardown(fn: () => unknown): void }

interface Served {
  child: ChildProcess
  /** The last 20 kB of stdout and stderr together, for failure messages. */
  output(): string
  exited: Promise<[number | null, NodeJS.Signals | null]>
}

/**
 * Starts a long-running command in its own process group (npm runs node under a shell), so teardown
 * can end the whole group: SIGTERM, then SIGKILL after 5 s.
 */
function serve(t: Teardown, command: string, args: string[], env: NodeJS.ProcessEnv): Served {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-20_000) }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.teardown(async () => {
    const group = -child.pid!
    try {
      process.kill(group, 'SIGTERM')
    } catch {
      return // the group is gone already
    }
    const timer = setTimeout(() => { try { process.kill(group, 'SIGKILL') } catch { /* gone */ } }, 5000)
    if (child.exitCode === null && child.signalCode === null) await exited
    clearTimeout(timer)
  })
  return { child, output: () => output, exited }
}


/** Resolves once `url` answers 200; rejects if the process exits first or `timeoutMs` passes. */
async function healthy(served: Served, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const { child } = served
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`exited (${child.exitCode ?? child.signalCode}) before ${url} answered:\n${served.output()}`)
    }
    const status = await fetch(url, { signal: AbortSignal.timeout(1000) }).then((r) => r.status, () => 0)
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms:\n${served.output()}`)
}

/** POSTs `initialize`; returns the status, the session id and the body text. */
async function initialize(url: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cli-test', version: '1.0.0' } },
    }),
    signal: AbortSignal.timeout(5000),
  })
  return { status: response.status, sessionId: response.headers.get('mcp-session-id'), body: await response.text() }
}

/** Waits up to `ms` for the process to exit; undefined if it is still running. */
async function exitWithin(served: Served, ms: number) {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), ms) })
  const result = await Promise.race([served.exited, late])
  clearTimeout(timer)
  return result
}

// What check prints for the shipped config: its path, every route, and the tools its handlers register.
const shippedOk = new RegExp(`^ok: ${join(ROOT, 'config/gateway.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(${SHIPPED.routes.length} routes, [1-9]\\d* tools\\)\n$`)

t.test('check', { jobs: 4 }, async (t) => {
  t.test('the shipped config/gateway.yaml is ok', async (t) => {
    const result = await run(['check', '--config', 'config/gateway.yaml'])
    t.equal(result.code, 0, 'exit 0', { stderr: result.stderr })
    t.match(result.stdout, shippedOk)
    t.equal(result.stderr, '')
  })

  t.test('without --config it checks config/gateway.yaml in the working directory', async (t) => {
    t.equal(DEFAULT_CONFIG_FILE, 'config/gateway.yaml')
    const result = await run(['check'])
    t.equal(result.code, 0, 'exit 0', { stderr: result.stderr })
    t.match(result.stdout, shippedOk)
    const elsewhere = await run(['check'], {}, 60_000, tmp)
    t.equal(elsewhere.code, 2, 'exit 2 where there is no config/gateway.yaml')
    t.match(elsewhere.stderr, `${join(tmp, 'config/gateway.yaml')}: cannot read the config file`)
  })

  t.test('a YAML syntax error is reported at file:line:col, exit 2', async (t) => {
    const file = await config('yaml-error', 'listen:\n  host: 127.0.0.1\n   port: 8080\nroutes: []\n')
    const result = await run(['check', '--config', file])
    t.equal(result.code, 2, 'exit 2')
    t.equal(result.stdout, '', 'nothing on stdout')
    t.equal(result.stderr, `${file}:3:8: bad indentation of a mapping entry\n`)
  })

  t.test('every unknown key is reported at its file:line:col, exit 2', async (t) => {
    const yaml = `listne:\n  port: 8080\nroutes:\n${route('/mcp', ECHO)}    colour: blue\n`
    const file = await config('unknown-keys', yaml)
    const result = await run(['check', '--config', file])
    t.equal(result.code, 2, 'exit 2')
    t.equal(result.stdout, '', 'nothing on stdout')
    t.same(result.stderr.trimEnd().split('\n'), [
      `${file}:1:1: unknown key "listne"`,
      `${file}:7:5: routes[0]: unknown key "colour"`,
    ])
  })

  t.test('every handler problem is reported with the handler path, exit 2', async (t) => {
    const missing = join(tmp, 'no-such-handler.ts')
    const yaml = [
      'routes:\n',
      route('/missing', missing),
      route('/ok', ECHO),
      route('/no-default', broken('no-default-export')),
      route('/not-a-handler', broken('not-a-handler')),
      route('/throws', broken('throws-at-import')),
    ].join('')
    const file = await config('broken-handlers', yaml)
    const result = await run(['check', '--config', file])
    t.equal(result.code, 2, 'exit 2')
    t.equal(result.stdout, '', 'nothing on stdout')
    const lines = result.stderr.trimEnd().split('\n')
    t.equal(lines.length, 4, 'one line per broken route', { stderr: result.stderr })
    t.equal(lines[0], `route /missing: ${missing}: handler module not found`)
    t.match(lines[1], `route /no-default: ${broken('no-default-export')}: has no default export`)
    t.match(lines[2], `route /not-a-handler: ${broken('not-a-handler')}: its default export (object) is not a handler`)
    t.match(lines[3], `route /throws: ${broken('throws-at-import')}: cannot load handler module:`)
    t.match(lines[3], 'throws-at-import: the module failed while loading', "the module's own error")
    t.notMatch(result.stderr, '/ok', 'the good route is not mentioned')
  })

  t.test('each broken handler module alone fails with a message naming its file', async (t) => {
    for (const name of ['no-default-export', 'not-a-handler', 'throws-at-import']) {
      const file = await config(`alone-${name}`, `routes:\n${route('/mcp', broken(name))}`)
      const result = await run(['check', '--config', file])
      t.equal(result.code, 2, `${name}: exit 2`)
      t.match(result.stderr, `route /mcp: ${broken(name)}: `, `${name}: names the route and the file`)
    }
  })
})

t.test('start serves the config until SIGTERM, then exits 0', async (t) => {
  const port = await freePort()
  const served = serve(t, process.execPath, [BIN, 'start', '--config', 'config/gateway.yaml'], { PORT: String(port), HOST: '127.0.0.1' })
  const base = `http://127.0.0.1:${port}`
  await healthy(served, `${base}/healthz`)
  t.pass('GET /healthz answers 200')

  const init = await initialize(`${base}${SHIPPED_LOCATION}`)
  t.equal(init.status, 200, `POST initialize to ${SHIPPED_LOCATION} answers 200`, { body: init.body })
  t.match(init.sessionId, /\S/, 'with an mcp-session-id')
  t.match(init.body, '"serverInfo"')

  const started = Date.now()
  served.child.kill('SIGTERM')
  const exit = await exitWithin(served, 5000)
  t.same(exit, [0, null], 'exit 0 after SIGTERM', { output: served.output() })
  t.comment(`stopped ${Date.now() - started} ms after SIGTERM`)
})

t.test('check runs each handler setup too: one that throws fails the check', async (t) => {
  const file = await config('check-setup-throws', `routes:\n${route('/setup', broken('setup-throws'))}\n${route('/mcp', ECHO)}`)
  const result = await run(['check', '--config', file])
  t.equal(result.code, 2, 'exit 2')
  t.match(result.stderr, `route /setup: ${broken('setup-throws')}: handler setup failed: setup-throws: the database is unreachable`)
  t.notMatch(result.stderr, 'route /mcp', 'the good route is not mentioned')
})

t.test('check loads each route access phase: every auth problem is named, nothing is fetched', async (t) => {
  const keys = join(tmp, 'keys.yaml')
  await writeFile(keys, '- { sha256: "not-a-hash", principal: ci }\n')
  const auth = (jwt: string, apiKeys: string, access: string) =>
    `    auth:\n      jwt: { issuer: ${jwt}, audience: "https://mcp.example.com/a" }\n      api_keys: ${JSON.stringify(apiKeys)}\n      access: ${JSON.stringify(access)}\n`
  const bad = await config('check-auth-bad', `routes:\n${route('/a', ECHO)}${auth('"http://auth.example.com"', keys, join(tmp, 'missing-access.ts'))}`)
  const result = await run(['check', '--config', bad])
  t.equal(result.code, 2, 'exit 2')
  t.match(result.stderr, 'route /a: auth: auth.jwt.issuer http://auth.example.com must use https://')
  t.match(result.stderr, `route /a: auth: auth.api_keys ${keys}: entry 1: sha256 must be 64 hex digits`)
  t.match(result.stderr, `route /a: auth: ${join(tmp, 'missing-access.ts')}: access module not found`)
  // An issuer nobody answers for: check proves the config sound without fetching its keys.
  await writeFile(keys, `- { sha256: "${'a'.repeat(64)}", principal: ci }\n`)
  const access = join(ROOT, 'test/edge/fixtures/access.ts')
  const good = await config('check-auth-good', `routes:\n${route('/a', ECHO)}${auth('"https://auth.invalid"', keys, access)}`)
  const ok = await run(['check', '--config', good])
  t.equal(ok.code, 0, ok.stderr)
  t.match(ok.stdout, /^ok: /)
})

t.test('start fails with exit 2 when a handler setup throws, naming the route and file', async (t) => {
  const file = await config('setup-throws', `routes:\n${route('/setup', broken('setup-throws'))}`)
  const port = await freePort()
  const result = await run(['start', '--config', file], { PORT: String(port), HOST: '127.0.0.1' })
  t.equal(result.code, 2, 'exit 2', { stdout: result.stdout })
  t.match(result.stderr, `route /setup: ${broken('setup-throws')}: handler setup failed`)
  t.match(result.stderr, 'setup-throws: the database is unreachable', "the setup's own error")
  const status = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 0)
  t.equal(status, 0, 'nothing listens on the port')
})

t.test('start refuses a PORT that is not a port number, naming PORT', async (t) => {
  const result = await run(['start', '--config', 'config/gateway.yaml'], { PORT: 'abc' })
  t.equal(result.code, 2, 'exit 2')
  t.equal(result.stderr, 'mcp-edge: cannot start: PORT must be a port number from 0 to 65535 (found "abc")\n')
})

t.test('npm start -- --config FILE passes the argument through', async (t) => {
  const file = await config('npm-start', `routes:\n${route('/via-npm', ECHO)}`)
  const port = await freePort()
  const served = serve(t, 'npm', ['start', '--silent', '--', '--config', file], { PORT: String(port), HOST: '127.0.0.1' })
  await healthy(served, `http://127.0.0.1:${port}/healthz`)
  const init = await initialize(`http://127.0.0.1:${port}/via-npm`)
  t.equal(init.status, 200, 'the route from the given config answers initialize', { body: init.body })
  t.match(init.sessionId, /\S/, 'with an mcp-session-id')
})

t.test('usage', { jobs: 4 }, async (t) => {
  t.test('an unknown command exits 1 with the usage on stderr', async (t) => {
    const result = await run(['frobnicate'])
    t.equal(result.code, 1, 'exit 1')
    t.match(result.stderr, 'unknown command: frobnicate')
    t.match(result.stderr, 'usage: mcp-edge <command>')
  })

  t.test('no command exits 1 with the usage on stderr', async (t) => {
    const result = await run([])
    t.equal(result.code, 1, 'exit 1')
    t.match(result.stderr, 'usage: mcp-edge <command>')
    t.equal(result.stdout, '')
  })

  t.test('an unknown option exits 1 with the usage', async (t) => {
    const result = await run(['check', '--frobnicate'])
    t.equal(result.code, 1, 'exit 1')
    t.match(result.stderr, "Unknown option '--frobnicate'")
    t.match(result.stderr, 'usage: mcp-edge <command>')
  })

  t.test('--help exits 0 with the usage on stdout', async (t) => {
    const result = await run(['--help'])
    t.equal(result.code, 0, 'exit 0')
    t.match(result.stdout, 'usage: mcp-edge <command>')
    t.match(result.stdout, /start .*\n.*check /)
    t.equal(result.stderr, '')
  })
})
